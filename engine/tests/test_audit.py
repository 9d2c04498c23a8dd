"""`make audit`: the budget judged on small Lighthouse reports, the gzip server, and one real run."""

import gzip
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from conftest import FIXTURES
from tutorials_site.commands import audit as command
from tutorials_site.commands import cli
from tutorials_site.core.errors import SiteError
from tutorials_site.core.project import Project
from tutorials_site.core.site import audit

TUTORIAL = "stable/ja/beginner/ddp_tutorial.html"
INDEX = "stable/ja/beginner/index.html"

SITE = Project.read(FIXTURES)  # the tests' site: its languages and galleries
GALLERY_DIRS = {g.gallery_dir for g in SITE.galleries}


def report(perf=1.0, a11y=1.0, bp=1.0, seo=1.0, size=212_000, audits=(), refs=()):
    """A Lighthouse report with the parts the audit reads."""
    scores = {"performance": perf, "accessibility": a11y, "best-practices": bp, "seo": seo}
    return {
        "categories": {name: {"score": score, "auditRefs": list(refs) if name == "accessibility" else []}
                       for name, score in scores.items()},
        "audits": {"total-byte-weight": {"numericValue": size, "details": {"items": [
            {"url": "http://127.0.0.1/x/_static/fonts/lato.woff2", "totalBytes": 180_000},
            {"url": "http://127.0.0.1/x/ddp_tutorial.html", "totalBytes": 30_000}]}},
            **{a["id"]: a for a in audits}},
    }


# --- the budget ----------------------------------------------------------------------------------


def test_a_page_within_budget_prints_one_line_and_passes():
    assert audit.failures(TUTORIAL, report(perf=0.97), True) == []
    assert audit.format_line(TUTORIAL, report(perf=0.97), True) == \
        "stable/ja/beginner/ddp_tutorial.html  perf 0.97  a11y 1.00  bp 1.00  seo 1.00  212 KB"


@pytest.mark.parametrize("category, score", [
    ("performance", 0.94), ("accessibility", 0.99), ("best-practices", 0.96), ("seo", 0.92), ("seo", None)])
def test_each_category_below_its_budget_fails(category, score):
    scores = {"performance": 1.0, "accessibility": 1.0, "best-practices": 1.0, "seo": 1.0, category: score}
    failing = report(*scores.values())
    assert audit.failures(TUTORIAL, failing, True) == [category]
    assert audit.format_line(TUTORIAL, failing, True).endswith(f"FAILS: {category}")
    assert audit.failure_details(TUTORIAL, failing, True)[1].startswith(f"  {category} ")


def test_performance_at_the_budget_passes():
    assert audit.failures(TUTORIAL, report(perf=0.95), True) == []
    assert not audit.needs_more_runs(report(perf=0.95)) and audit.needs_more_runs(report(perf=0.949))


def test_a_tutorial_over_250_kb_fails_an_index_does_not():
    assert audit.failures(TUTORIAL, report(size=250_000), True) == []
    assert audit.failures(TUTORIAL, report(size=250_001), True) == ["transferred"]
    assert audit.failures(INDEX, report(size=900_000), False) == []
    details = audit.failure_details(TUTORIAL, report(size=612_000), True, base="http://127.0.0.1")
    assert details[1] == "  transferred 612 KB > 250 KB; the heaviest:"
    assert details[2].split() == ["180", "KB", "x/_static/fonts/lato.woff2"]


def test_a_failing_category_names_its_failing_audits_and_their_elements():
    refs = [{"id": "image-alt", "weight": 10}, {"id": "html-has-lang", "weight": 7},
            {"id": "landmarks", "weight": 0}, {"id": "manual-check", "weight": 0}]
    audits = [
        {"id": "image-alt", "title": "Image elements do not have [alt] attributes", "score": 0,
         "scoreDisplayMode": "binary", "details": {"items": [
             {"node": {"selector": f"p > img.n{i}", "snippet": f'<img class="n{i}" src="{i}.png">'}} for i in (0, 0, 1, 2, 3)]}},
        {"id": "html-has-lang", "title": "has lang", "score": 1, "scoreDisplayMode": "binary"},
        {"id": "landmarks", "title": "n/a", "score": None, "scoreDisplayMode": "notApplicable"},
        {"id": "manual-check", "title": "manual", "score": 0, "scoreDisplayMode": "manual"},
    ]
    failing = report(a11y=0.9, refs=refs, audits=audits)
    elements = [f'p > img.n{i}  <img class="n{i}" src="{i}.png">' for i in range(3)]  # the first three, once each
    assert audit.failing_audits(failing, "accessibility") == [
        ("image-alt", "Image elements do not have [alt] attributes", "", elements)]
    assert audit.failure_details(TUTORIAL, failing, True) == [
        f"{TUTORIAL}:", "  accessibility 0.90 < 1.00:", "    image-alt: Image elements do not have [alt] attributes",
        *[f"      {element}" for element in elements]]


def test_an_item_is_named_by_its_url_or_its_element_and_a_console_message_by_its_text():
    base = "http://127.0.0.1:8000"
    assert audit.item_label({"url": f"{base}/stable/en/_static/x.js", "wastedMs": 9}, base) == "stable/en/_static/x.js"
    assert audit.item_label({"source": "network", "description": "404 (Not Found)",
                             "sourceLocation": {"url": f"{base}/favicon.ico"}}, base) == "favicon.ico: 404 (Not Found)"
    assert audit.item_label({"source": {"type": "node", "selector": "head > link", "snippet": '<link hreflang="ko">'}}) \
        == 'head > link  <link hreflang="ko">'
    assert audit.item_label({"type": "list-section", "description": "a table of its own"}) is None


def test_the_median_of_three_runs_is_judged_and_shown():
    runs = [report(perf=0.90, seo=0.5), report(perf=0.97), report(perf=0.93)]
    judged = audit.median_run(runs)
    assert audit.scores(judged)["performance"] == 0.93
    line = audit.format_line(INDEX, judged, False, [0.90, 0.97, 0.93])
    assert line.endswith("(perf: median of 3 runs: 0.90 0.93 0.97)  FAILS: performance")


@pytest.mark.parametrize("index, slowdown", [
    (1533, 4.0),  # the host Lighthouse's default is made for
    (3066, 8.0),  # twice as fast: slowed twice as much, the same phone emulated
    (766.5, 2.0),  # a host half as fast (or busy) is slowed half as much
    (200, 1.0)])  # slower than the phone: never sped up
def test_the_cpu_slowdown_is_calibrated_to_the_host_s_benchmark_index(index, slowdown):
    assert audit.cpu_slowdown(index) == slowdown


def test_a_page_line_names_the_slowdown_and_the_host_index_its_run_had():
    measured = {**report(perf=0.97), "environment": {"benchmarkIndex": 2800.4},
                "configSettings": {"throttling": {"cpuSlowdownMultiplier": 7.3}}}
    assert audit.benchmark_index(measured) == 2800.4
    assert audit.format_line(TUTORIAL, measured, True) == (
        "stable/ja/beginner/ddp_tutorial.html  perf 0.97  a11y 1.00  bp 1.00  seo 1.00  212 KB  cpu 7.3x (host index 2800)")
    assert audit.benchmark_index(report()) is None


def test_each_run_is_slowed_by_what_the_run_before_it_measured(tmp_path):
    used = []

    class Runs:
        def report(self, url, output, slowdown):
            used.append(slowdown)
            return {**report(), "environment": {"benchmarkIndex": [3066, 766.5, 1533][len(used) - 1]}}

    runner = command.Lighthouse("http://127.0.0.1:1", str(tmp_path), Runs())
    runner.calibrate(INDEX)
    runner.measure(INDEX)
    runner.measure(TUTORIAL)
    assert used == [audit.DEFAULT_SLOWDOWN, 8.0, 2.0]
    assert runner.slowdown == 4.0


@pytest.mark.site
@pytest.mark.parametrize("script, code, message", [
    ("console.error('chromium: cannot open display'); process.exit(3);", "exit status 3", "cannot open display"),
    ("setInterval(() => {}, 1000);", "TIMEOUT", "no report after 1 s"),  # it hangs: stopped
    ("process.stdin.on('data', () => console.log(JSON.stringify({ok: false, error: 'Unable to connect'})));",
     "LIGHTHOUSE", "Unable to connect"),
])
def test_a_lighthouse_process_that_fails_or_hangs_gives_a_failed_report_and_is_gone(monkeypatch, tmp_path, script,
                                                                                     code, message):
    fake = tmp_path / "runs.mjs"
    fake.write_text(script)
    monkeypatch.setattr(command, "RUNS_SCRIPT", fake)
    monkeypatch.setattr(command, "LIGHTHOUSE_TIMEOUT", 1)
    with command.LighthouseRuns("chromium", str(tmp_path)) as runs:
        report = runs.report("http://127.0.0.1:1/", tmp_path / "report.json", 4.0)
        process = runs.process
        assert report["runtimeError"]["code"] == code and message in report["runtimeError"]["message"]
    assert process is None or process.poll() is not None
    assert running_with(str(fake)) == []


def test_a_run_that_failed_is_a_failure_with_its_message():
    failed = {"runtimeError": {"code": "ERRORED_DOCUMENT_REQUEST", "message": "status code: 404"}}
    assert audit.failures(INDEX, failed, False) == ["runtime error"]
    assert "Lighthouse failed: ERRORED_DOCUMENT_REQUEST: status code: 404" in audit.format_line(INDEX, failed, False)


def test_an_axe_violation_names_page_scheme_rule_and_first_elements():
    violation = {"id": "color-contrast", "help": "Elements must meet minimum color contrast ratio thresholds",
                 "nodes": [{"target": [f"a.n{i}"]} for i in range(5)]}
    assert audit.format_violation(INDEX, "dark", violation) == [
        f"{INDEX} [dark] color-contrast: Elements must meet minimum color contrast ratio thresholds",
        "    a.n0", "    a.n1", "    a.n2", "    and 2 more"]


# --- the pages of a published tree ---------------------------------------------------------------

IMAGE_WITHOUT_ALT = '<img src="data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E" width="9" height="9">'


def page(title, body=""):
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
            f"<body><main><h1>{title}</h1>{body}</main></body></html>")


def published_tree(root, stable=True):
    """The smallest published tree: versions.json, 404.html and stable/en/ with one page and its assets."""
    root.mkdir(exist_ok=True)
    entry = {"name": "1.0", "label": "1.0", "release": True, "torch": "2", "languages": ["en"],
             "built": "2026-01-01 00:00 UTC", "path": "1.0/"}
    (root / "versions.json").write_text(json.dumps({"stable": "1.0", "versions": [entry]} if stable else
                                                   {"stable": None, "versions": []}))
    (root / "404.html").write_text(page("Not found"))
    (root / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    if stable:
        (root / "stable" / "en" / "_static").mkdir(parents=True)
        (root / "stable" / "en" / "index.html").write_text(page("Tutorials", IMAGE_WITHOUT_ALT))
        (root / "stable" / "en" / "_static" / "page.html").write_text(page("not a page of the site"))
        (root / "stable" / "en" / "_static" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    return root


def test_the_pages_measured_and_the_pages_checked(tmp_path):
    tree = published_tree(tmp_path)
    beginner = tree / "stable" / "en" / "beginner"
    beginner.mkdir()
    for name in ("index.html", "b_tutorial.html", "a_tutorial.html"):
        (beginner / name).write_text(page(name))
    (tree / "stable" / "en" / "search.html").write_text(page("Search"))
    assert audit.stable_languages(SITE, tree) == audit.stable_languages(SITE, tree, ["ja", "en"]) == ["en"]
    with pytest.raises(SiteError, match=r"^LANGUAGES: none of ja ko is published in .*/stable/ \(en\)$"):
        audit.stable_languages(SITE, tree, ["ja", "ko"])
    assert audit.lighthouse_pages(tree, ["en"], GALLERY_DIRS) == [
        "stable/en/index.html", "stable/en/beginner/index.html",
        "stable/en/beginner/a_tutorial.html", "stable/en/beginner/b_tutorial.html"]
    assert audit.html_pages(tree, ["en"]) == [
        "stable/en/beginner/a_tutorial.html", "stable/en/beginner/b_tutorial.html", "stable/en/beginner/index.html",
        "stable/en/index.html", "stable/en/search.html"]
    measured = audit.lighthouse_pages(tree, ["en"], GALLERY_DIRS)
    assert [audit.is_tutorial(p, GALLERY_DIRS) for p in measured] == [False, False, True, True]


def test_a_tree_without_stable_is_refused(tmp_path, monkeypatch):
    with pytest.raises(SiteError, match=r"PAGES=.*: not a published tree with a stable/ version"):
        audit.stable_languages(SITE, published_tree(tmp_path, stable=False))
    (tmp_path / "versions.json").write_text("{")
    with pytest.raises(SiteError, match=r"PAGES=.*: .*unreadable or corrupt versions.json"):
        audit.stable_languages(SITE, tmp_path)
    # The command, in this process (a unit test starts no audit): a message alone is exit status 1, on stderr.
    monkeypatch.setenv("PAGES", str(tmp_path / "empty"))
    with pytest.raises(SystemExit) as exited:
        cli.main(["--project", str(FIXTURES), "audit"])
    assert exited.value.code.startswith(f"error: PAGES={tmp_path / 'empty'}: nothing published there yet: run "
                                        "`VERSION=1.0 tutorials-site docs` first")


# --- the server ----------------------------------------------------------------------------------


def get(base, path, **headers):
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("accept, encoded", [
    ("gzip, deflate, br", True), ("br;q=1.0, gzip;q=0.5", True), ("gzip;q=0", False), ("identity", False), ("", False)])
def test_gzip_only_when_the_request_accepts_it(accept, encoded):
    assert command.accepts_gzip(accept) is encoded


def listening(port):
    """The local addresses of the IPv4 and IPv6 sockets listening on a port (from /proc/net)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.append(socket.inet_ntoa(bytes.fromhex(address)[::-1]) if len(address) == 8 else address)
    return found


def test_the_server_serves_like_github_pages_and_stops(tmp_path):
    tree = published_tree(tmp_path)
    html = (tree / "stable" / "en" / "index.html").read_bytes()
    threads = set(threading.enumerate())
    with command.serve(tree) as base:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", base)
        port = int(base.rsplit(":", 1)[1])

        status, headers, body = get(base, "/stable/en/index.html", **{"Accept-Encoding": "gzip"})
        assert (status, headers["Content-Encoding"], headers["Content-Type"]) == (200, "gzip", "text/html; charset=utf-8")
        assert int(headers["Content-Length"]) == len(body) < len(html) and gzip.decompress(body) == html

        status, headers, body = get(base, "/stable/en/")  # a folder: its index.html, not compressed unasked
        assert (status, body, "Content-Encoding" in headers) == (200, html, False)
        assert int(headers["Content-Length"]) == len(html)
        status, headers, _ = get(base, "/stable/en")
        assert (status, headers["Location"]) == (301, "/stable/en/")

        status, headers, body = get(base, "/stable/en/_static/logo.png", **{"Accept-Encoding": "gzip"})
        assert (status, "Content-Encoding" in headers, body) == (200, False, (tree / "stable/en/_static/logo.png").read_bytes())

        status, headers, body = get(base, "/stable/en/nothing.html", **{"Accept-Encoding": "gzip"})
        assert status == 404 and gzip.decompress(body) == (tree / "404.html").read_bytes()
        assert listening(port) == ["127.0.0.1"]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert set(threading.enumerate()) == threads


def test_stopping_the_server_ends_the_connections_kept_alive_without_waiting_for_them(tmp_path, monkeypatch):
    """A browser keeps its connection open after a page: the server's end closes it rather than waiting out its
    idle time (an hour here, where a stop that waited would hang the test)."""
    monkeypatch.setattr(command.PagesHandler, "timeout", 3600)
    tree = published_tree(tmp_path)
    stopped = threading.Event()
    served = command.serve(tree)
    base = served.__enter__()
    connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=30)
    connection.request("GET", "/stable/en/index.html")
    response = connection.getresponse()
    assert response.status == 200 and response.read() and not response.will_close  # kept alive, and idle
    stopping = threading.Thread(target=lambda: (served.__exit__(None, None, None), stopped.set()), daemon=True)
    stopping.start()
    stopping.join(timeout=60)
    assert stopped.is_set(), "the server still waits for the idle connection"
    connection.request("GET", "/stable/en/index.html")  # the server has closed it
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        connection.getresponse()
    connection.close()


# --- the command, end to end ----------------------------------------------------------------------


@pytest.mark.site
def test_the_audit_fails_naming_the_page_and_the_rule(tmp_path, fixture_site):
    tree = published_tree(tmp_path / "pages")
    # Every browser profile lives in this folder, so a browser left running would show it. Short: Chromium
    # refuses a profile whose socket path is longer than a Unix socket's.
    with tempfile.TemporaryDirectory(prefix="audit-") as scratch:
        result = subprocess.run([sys.executable, "-m", "tutorials_site", "audit"], cwd=fixture_site.root, capture_output=True,
                                text=True, timeout=240, env={**os.environ, "PAGES": str(tree), "TMPDIR": scratch, "LANGUAGES": ""})
        left = running_with(scratch)
    assert left == []
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert re.search(r"^stable/en/index\.html  perf \d\.\d\d  a11y 0\.\d\d  bp \d\.\d\d  seo \d\.\d\d  \d+ KB.*"
                     r"FAILS: .*accessibility", out, re.M), out
    assert re.search(r"^    image-alt: ", out, re.M), out  # Lighthouse's failing audit
    assert re.search(r"^lighthouse: CPU slowed \d+\.\dx, calibrated to this host's BenchmarkIndex", out, re.M), out
    assert re.search(r"^stable/en/index\.html  .* cpu \d+\.\dx \(host index \d+\)", out, re.M), out
    for scheme in ("light", "dark"):
        assert f"stable/en/index.html [{scheme}] image-alt: Images must have alternative text" in out, out
    assert "axe: 1 page(s) x 2 schemes (light, dark): 2 violation(s), 0 console error(s)" in out, out
    assert re.search(r"^audit: 1 page\(s\) over the Lighthouse budget, 2 axe violation\(s\)", result.stderr, re.M)


def running_with(text):
    """The processes whose command line holds TEXT."""
    def cmdline(pid):
        try:
            return Path("/proc", pid, "cmdline").read_bytes()
        except OSError:
            return b""

    return [pid for pid in os.listdir("/proc") if pid.isdigit() and text.encode() in cmdline(pid)]
