"""`tutorials-site audit`: the published site measured the way readers and search engines meet it.

PAGES is served on 127.0.0.1 as GitHub Pages serves it (gzip, the tree's
404.html); Lighthouse measures the landing page, the gallery indexes and the
tutorials of every language of stable/, and axe-core checks every page in the
light and the dark colour scheme. The budget and the verdicts are
core/site/audit.py's. axe-core (npm, pinned in the Makefile) checks a page opened in
Playwright; the browser tests use the same function.
"""

import contextlib
import functools
import gzip
import json
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from ..core import project
from ..core.errors import Failed, UsageError
from ..core.site import audit
from ..core.site.settings import Settings

if TYPE_CHECKING:
    from playwright.sync_api import ConsoleMessage, Page, Request, Response  # a test tool: imported when the audit runs

# The npm tools the audit runs, from the environment the command runs in (<venv>/node), as tested; this
# repository's Makefile installs them there (make test-tools).
NODE_TOOLS = ("lighthouse@13.5.0", "axe-core@4.11.0")
NODE_MODULES = Path(sys.prefix) / "node" / "node_modules"
AXE = NODE_MODULES / "axe-core" / "axe.min.js"
LIGHTHOUSE = NODE_MODULES / "lighthouse" / "core" / "index.js"

BROWSER_FLAGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
CATEGORIES = ",".join(audit.BUDGET)
LIGHTHOUSE_TIMEOUT = 300  # seconds; a run takes about 8 s here
Scheme = Literal["light", "dark"]
SCHEMES: tuple[Scheme, ...] = ("light", "dark")

# What GitHub Pages compresses, and the cache lifetime it gives every file.
GZIPPED = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt"}
CACHE_CONTROL = "max-age=600"


def watch(page: "Page") -> list[str]:
    """What goes wrong on a Playwright page from now on: console errors, uncaught errors, failed requests
    (a list that fills as they happen; the browser tests use it too)."""
    seen: list[str] = []

    def console(m: "ConsoleMessage") -> None:
        # A failed request's console message has no URL: the response and requestfailed events name it.
        if m.type == "error" and not m.text.startswith("Failed to load resource"):
            seen.append(f"console error: {m.text}")

    def response(r: "Response") -> None:
        if r.status >= 400:
            seen.append(f"failed request: {r.status} {r.url}")

    def request_failed(r: "Request") -> None:
        if r.failure != "net::ERR_ABORTED":  # cut short by leaving the page: not failed
            seen.append(f"failed request: {r.failure} {r.url}")

    page.on("console", console)
    page.on("pageerror", lambda e: seen.append(f"uncaught error: {e}"))
    page.on("response", response)
    page.on("requestfailed", request_failed)
    return seen


def axe_violations(page: "Page") -> list[audit.Violation]:
    """axe-core's violations on an open Playwright page (every rule axe runs by default)."""
    page.add_script_tag(path=str(AXE))
    violations: list[audit.Violation] = page.evaluate("async () => (await axe.run(document)).violations")
    return violations


# --- the server ----------------------------------------------------------------------------------


def accepts_gzip(header: str | None) -> bool:
    """Whether an Accept-Encoding header admits gzip (`gzip;q=0` refuses it)."""
    for part in (header or "").split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() in ("gzip", "*"):
            q = params.strip().removeprefix("q=").strip() if params.strip().startswith("q=") else "1"
            try:
                return float(q) > 0
            except ValueError:
                return False
    return False


class PagesHandler(SimpleHTTPRequestHandler):
    """A published tree served like GitHub Pages: folders open their index.html, a missing path gets the
    tree's 404.html with status 404, text is gzipped for a client that accepts it."""

    protocol_version = "HTTP/1.1"  # keep-alive, as browsers meet the real site
    timeout = 5  # an idle kept-alive connection ends, so that stopping the server never waits long

    def do_GET(self) -> None:
        """Serve the file, or 404.html."""
        self._serve(send_body=True)

    def do_HEAD(self) -> None:
        """Send what GET would, without the body."""
        self._serve(send_body=False)

    def _serve(self, send_body: bool) -> None:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            url = urlsplit(self.path)
            if not url.path.endswith("/"):
                self.send_response(301)
                self.send_header("Location", url._replace(path=url.path + "/").geturl())
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path = path / "index.html"
        status = 200
        if not path.is_file():
            status, path = 404, Path(self.directory, "404.html")
        body = path.read_bytes() if path.is_file() else b"404 Not Found\n"
        self.send_response(status)
        kind = self.guess_type(str(path)) if path.is_file() else "text/plain"
        if path.suffix in GZIPPED or not path.is_file():
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Vary", "Accept-Encoding")
            if accepts_gzip(self.headers.get("Accept-Encoding")):
                body = gzip.compress(body, mtime=0)
                self.send_header("Content-Encoding", "gzip")
        else:
            self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", CACHE_CONTROL)
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Log nothing: the audit prints its own lines."""


class PagesServer(ThreadingHTTPServer):
    """The server of the published tree, one thread per connection. Closing it ends the connections a browser
    keeps alive between requests at once, instead of waiting out their idle time (PagesHandler.timeout)."""

    daemon_threads = False  # server_close() waits for every connection's thread: none outlives serve()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        """Start the connection's thread, holding the connection until it ends (shutdown_request)."""
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        """Close a connection that ended."""
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def server_close(self) -> None:
        """Stop reading from every connection still open (its thread then sees the end of the stream and
        ends, a response being written included), and wait for their threads."""
        with self._connections_lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):  # the client closed it already
                    connection.shutdown(socket.SHUT_RD)
        super().server_close()


@contextlib.contextmanager
def serve(pages: Path) -> Iterator[str]:
    """Serve the tree at `pages` on 127.0.0.1 (a free port) while the block runs; yields the base URL."""
    server = PagesServer(("127.0.0.1", 0), functools.partial(PagesHandler, directory=str(pages)))
    thread = threading.Thread(target=server.serve_forever, name="audit-server")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# --- Lighthouse ----------------------------------------------------------------------------------


RUNS_SCRIPT = Path(__file__).with_name("lighthouse_runs.mjs")


class LighthouseRuns:
    """Lighthouse (mobile, simulated throttling) in one node process with one browser (lighthouse_runs.mjs),
    run after run; a context manager: the process and its browser end with the block."""

    def __init__(self, chromium: str, folder: str) -> None:
        self.chromium, self.log = chromium, Path(folder, "lighthouse.log")
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> "LighthouseRuns":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _started(self) -> subprocess.Popen[str]:
        if self.process is None:
            flags = json.dumps(["--headless=new", *BROWSER_FLAGS])
            with self.log.open("a", encoding="utf-8") as log:
                self.process = subprocess.Popen(["node", str(RUNS_SCRIPT), str(NODE_MODULES), self.chromium, CATEGORIES, flags],
                                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        return self.process

    def report(self, url: str, output: Path, slowdown: float) -> dict[str, Any]:
        """One run on URL with the CPU slowed SLOWDOWN times; its JSON report (also kept at OUTPUT), or one that
        carries the failure as Lighthouse's own reports do (runtimeError). A run that hangs ends its process:
        the next run starts another."""
        process = self._started()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps({"url": url, "output": str(output), "slowdown": slowdown}) + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            pass  # it ended: told below, with its log
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            answered = selector.select(timeout=LIGHTHOUSE_TIMEOUT)
        if not answered:
            self.close(finish=0)
            return {"runtimeError": {"code": "TIMEOUT", "message": f"no report after {LIGHTHOUSE_TIMEOUT} s"}}
        line = process.stdout.readline()
        if not line:
            self.close()
            tail = " | ".join(self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:])
            return {"runtimeError": {"code": f"exit status {process.returncode}", "message": tail}}
        answer = json.loads(line)
        if not answer["ok"]:
            return {"runtimeError": {"code": "LIGHTHOUSE", "message": answer["error"]}}
        report: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
        return report

    def close(self, finish: float = 30) -> None:
        """End the process: its input closed, it closes its browser and ends; stopped (SIGTERM, then SIGKILL) where
        it has not ended within FINISH seconds."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()  # type: ignore[union-attr]
        try:
            process.wait(timeout=finish)
        except subprocess.TimeoutExpired:
            process.terminate()  # it closes its browser on SIGTERM too
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()  # type: ignore[union-attr]


class Lighthouse:
    """Lighthouse runs on the served tree, each with the CPU slowdown calibrated from the host's speed in the
    run before it (core/site/audit.py says why): a host that slows down during the audit is followed."""

    def __init__(self, base: str, folder: str, runs: LighthouseRuns) -> None:
        self.base, self.folder, self.runs = base, folder, runs
        self.slowdown = audit.DEFAULT_SLOWDOWN

    def run(self, path: str, name: str) -> dict[str, Any]:
        """One run on PATH, its report kept in the scratch folder as NAME."""
        report = self.runs.report(f"{self.base}/{path}", Path(self.folder, name), self.slowdown)
        index = audit.benchmark_index(report)
        if index:
            self.slowdown = audit.cpu_slowdown(index)
        return report

    def calibrate(self, path: str) -> None:
        """A first run, whose report only calibrates the next ones."""
        self.run(path, "calibration.json")
        print(f"lighthouse: CPU slowed {self.slowdown:.1f}x, calibrated to this host's BenchmarkIndex "
              f"(Lighthouse's {audit.DEFAULT_SLOWDOWN:.0f}x is made for an index of {audit.REFERENCE_INDEX:.0f})",
              flush=True)

    def measure(self, path: str) -> tuple[audit.Report, list[float | None]]:
        """A page's judged report and its runs' performance scores: more runs when the first is below budget."""
        name = path.replace("/", "_")
        reports = [self.run(path, f"{name}.1.json")]
        if not reports[0].get("runtimeError") and audit.needs_more_runs(reports[0]):
            reports += [self.run(path, f"{name}.{n}.json") for n in range(2, audit.PERFORMANCE_RUNS + 1)]
            if any(r.get("runtimeError") for r in reports):
                return next(r for r in reports if r.get("runtimeError")), []
        return audit.median_run(reports), [audit.scores(r)["performance"] for r in reports]


def lighthouse_pass(base: str, paths: Sequence[str], chromium: str, gallery_dirs: Collection[str]) -> int:
    """Measure every page, a line each; the number of pages over budget."""
    width = max(map(len, paths))
    over = 0
    errored: dict[str, str] = {}
    details: list[str] = []
    with tempfile.TemporaryDirectory(prefix="audit-") as folder, LighthouseRuns(chromium, folder) as runs:
        runner = Lighthouse(base, folder, runs)
        runner.calibrate(paths[0])
        for path in paths:
            report, performance = runner.measure(path)
            tutorial = audit.is_tutorial(path, gallery_dirs)
            print(audit.format_line(path, report, tutorial, performance, width), flush=True)
            for warning in report.get("runWarnings", []):
                print(f"    warning: {warning}", flush=True)
            errored.update(audit.errored_audits(report))
            if audit.failures(path, report, tutorial):
                over += 1
                details += audit.failure_details(path, report, tutorial, base)
    if errored:
        print(f"lighthouse: {len(errored)} audit(s) could not run (node {node_version()}):")
        print("".join(f"    {audit_id}: {message}\n" for audit_id, message in sorted(errored.items())), end="")
    print(f"lighthouse: {len(paths) - over} of {len(paths)} page(s) within budget "
          f"(performance >= {audit.BUDGET['performance']}, accessibility, best practices and SEO = 1, "
          f"a tutorial <= {audit.kb(audit.TUTORIAL_BYTES)})")
    if details:
        print("\n".join(details))
    return over


def node_version() -> str:
    """`node --version`: what Lighthouse ran under."""
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


# --- axe-core ------------------------------------------------------------------------------------


def axe_pass(base: str, paths: Sequence[str], chromium: str) -> tuple[int, int]:
    """axe-core on every page in each colour scheme, and what the console and the network reported there;
    (violations, errors) counted and printed."""
    from playwright.sync_api import Error, sync_playwright  # a test tool: imported only when the audit runs

    violations: list[tuple[str, Scheme, audit.Violation]] = []
    errors: list[str] = []
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=chromium, args=BROWSER_FLAGS)
        except Error as error:
            raise UsageError(f"CHROMIUM={chromium}: the browser did not start: {error.message.splitlines()[0]}") from None
        try:
            for scheme in SCHEMES:
                context = browser.new_context(color_scheme=scheme)
                page = context.new_page()
                seen = watch(page)
                for path in paths:
                    seen.clear()
                    page.goto(f"{base}/{path}", wait_until="networkidle")
                    violations += [(path, scheme, v) for v in axe_violations(page)]
                    errors += [f"{path} [{scheme}] {problem}" for problem in seen]
                context.close()
        finally:
            browser.close()
    print(f"axe: {len(paths)} page(s) x {len(SCHEMES)} schemes ({', '.join(SCHEMES)}): "
          f"{len(violations)} violation(s), {len(errors)} console error(s) or failed request(s)")
    for path, scheme, violation in violations:
        print("\n".join(audit.format_violation(path, scheme, violation)))
    for problem in errors:
        print(problem)
    return len(violations), len(errors)


def run(site: project.Project, settings: Settings) -> None:
    """`tutorials-site audit`: Lighthouse and axe-core on SITE's published tree PAGES; Failed where a page breaks the budget."""
    pages = Path(settings.pages)
    segs = audit.stable_languages(site, pages, [lang.seg for lang in settings.langs])
    gallery_dirs = {gallery.gallery_dir for gallery in site.galleries}
    for needed in (LIGHTHOUSE, AXE):
        if not needed.is_file():
            raise UsageError(f"{needed}: missing; the audit runs Lighthouse and axe-core from {NODE_MODULES.parent}: "
                             f"npm install --prefix {NODE_MODULES.parent} {' '.join(NODE_TOOLS)}")
    if not shutil.which("node"):
        raise UsageError("node: not found; Lighthouse runs under node (install nodejs)")
    if not Path(settings.chromium).is_file():
        raise UsageError(f"CHROMIUM={settings.chromium}: no such browser")
    started = time.monotonic()
    print(f"audit: {pages}/stable/ ({', '.join(segs)}), served gzipped on 127.0.0.1", flush=True)
    with serve(pages) as base:
        over = lighthouse_pass(base, audit.lighthouse_pages(pages, segs, gallery_dirs), settings.chromium, gallery_dirs)
        violations, errors = axe_pass(base, audit.html_pages(pages, segs), settings.chromium)
    took = f"{time.monotonic() - started:.0f} s"
    if over or violations or errors:
        raise Failed(f"audit: {over} page(s) over the Lighthouse budget, {violations} axe violation(s), "
                     f"{errors} console error(s) or failed request(s) ({took})")
    print(f"audit: every page within budget, no axe violation, no console error ({took})")
