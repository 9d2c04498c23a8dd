"""`tutorials-site audit`'s plain logic: the budget, the pages measured, and Lighthouse's and axe-core's reports judged.

The command (commands/audit.py) serves the published tree and runs the tools;
what passes is decided here, from the reports alone.
"""

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import project
from ..errors import SiteError
from . import versions

# The budget, in one place: Lighthouse's category scores (0 to 1), mobile, simulated throttling,
# and the bytes a tutorial page transfers, gzipped, its figures included.
BUDGET = {"performance": 0.95, "accessibility": 1.0, "best-practices": 1.0, "seo": 1.0}
TUTORIAL_BYTES = 250 * 1000
# Performance wobbles between runs: a page below its budget is measured this many times in all, and the run with
# the median performance is the one judged. Five, as Lighthouse's own guidance on variability advises: with three, a
# busy moment of a shared machine still failed a page whose runs were 0.92, 0.94 and 0.97.
PERFORMANCE_RUNS = 5

# Lighthouse slows the CPU by a factor of the host's speed, so a fixed factor emulates a faster phone on a
# fast host and a slower one on a slow or busy host (a CI machine shared with others). Each run's factor is
# calibrated from the host's BenchmarkIndex, as Lighthouse's throttling guide advises: its default 4x is
# made for an index of 1533 (where its CPU-throttling calculator puts 4x), and the factor scales with the
# index, so that every host emulates the same phone.
DEFAULT_SLOWDOWN = 4.0
REFERENCE_INDEX = 1533.0

SHORT = {"performance": "perf", "accessibility": "a11y", "best-practices": "bp", "seo": "seo"}
PASSED = 0.9  # Lighthouse shows an audit scoring at least this as passed
SCORED = {"binary", "numeric", "metricSavings"}  # the other display modes carry no verdict
NOT_PAGES = {"_static", "_sources", "_downloads", "_images"}  # a language's folders without pages of its own
ITEMS_SHOWN = 3
SNIPPET = 100  # characters of an element's HTML shown beside its selector

# Lighthouse's JSON report of one page, and one detail item of one of its audits; axe-core's violation.
Report = Mapping[str, Any]
Item = Mapping[str, Any]
Violation = Mapping[str, Any]


class AuditError(SiteError):
    """A tree that cannot be audited."""


def kb(count: float) -> str:
    """COUNT bytes in kilobytes, as the lines show them: `212 KB`."""
    return f"{round(count / 1000)} KB"


# --- the pages -----------------------------------------------------------------------------------


def stable_languages(site: project.Project, pages: Path | str, wanted: Collection[str] | None = None) -> list[str]:
    """The URL segments published under PAGES/stable/ (those in `wanted`, if given), in SITE's order;
    refuses a tree without stable/."""
    pages = Path(pages)
    if not (pages / "versions.json").is_file():
        raise AuditError(f"PAGES={pages}: nothing published there yet: run `VERSION=1.0 tutorials-site docs` first (it "
                         "builds every language and publishes them into PAGES as the stable version), then "
                         "`tutorials-site audit`")
    try:
        stable = versions.load(pages / "versions.json").stable
    except versions.VersionsError as error:
        raise AuditError(f"PAGES={pages}: {error}") from None
    if not stable or not (pages / "stable").is_dir():
        raise AuditError(f"PAGES={pages}: not a published tree with a stable/ version (no versions.json naming one); "
                         "`VERSION=1.0 tutorials-site docs` publishes one into PAGES")
    segs = [lang.seg for lang in site.languages.all if (pages / "stable" / lang.seg / "index.html").is_file()]
    if not segs:
        raise AuditError(f"PAGES={pages}: stable/ holds no language (no stable/<language>/index.html)")
    chosen = [seg for seg in segs if wanted is None or seg in wanted]
    if not chosen:
        raise AuditError(f"LANGUAGES: none of {' '.join(wanted or ())} is published in {pages}/stable/ ({' '.join(segs)})")
    return chosen


def is_tutorial(path: Path | str, gallery_dirs: Collection[str]) -> bool:
    """stable/<seg>/<gallery>/[<section>/]<stem>.html, GALLERY_DIRS being the site's; the galleries' and sections'
    index.html aside."""
    parts = Path(path).parts
    return len(parts) in (4, 5) and parts[2] in gallery_dirs and parts[-1] != "index.html"


def lighthouse_pages(pages: Path | str, segs: Sequence[str], gallery_dirs: Collection[str]) -> list[str]:
    """What Lighthouse measures, per language: the landing page, each gallery's index and each tutorial."""
    found = []
    for seg in segs:
        found.append(f"stable/{seg}/index.html")
        for gallery in sorted(gallery_dirs):
            top = Path(pages, "stable", seg, gallery)
            if not top.is_dir():
                continue
            for folder in [top, *sorted(d for d in top.iterdir() if (d / "index.html").exists())]:  # its sections
                at = folder.relative_to(pages).as_posix()
                found.append(f"{at}/index.html")
                found += [f"{at}/{p.name}" for p in sorted(folder.glob("*.html")) if p.name != "index.html"]
    return found


def html_pages(pages: Path | str, segs: Sequence[str]) -> list[str]:
    """Every HTML page of the given languages of stable/, as paths relative to PAGES."""
    pages = Path(pages)
    found = []
    for seg in segs:
        root = pages / "stable" / seg
        found += sorted(p.relative_to(pages).as_posix() for p in root.rglob("*.html")
                        if not NOT_PAGES & set(p.relative_to(root).parts))
    return found


# --- Lighthouse's reports ------------------------------------------------------------------------


def scores(report: Report) -> dict[str, float | None]:
    """Category -> score (None where Lighthouse could not score it)."""
    categories = report.get("categories", {})
    return {name: categories.get(name, {}).get("score") for name in BUDGET}


def transferred(report: Report) -> int:
    """The bytes the page transferred (Lighthouse's total-byte-weight), 0 where it has none."""
    return int(report.get("audits", {}).get("total-byte-weight", {}).get("numericValue", 0))


def cpu_slowdown(benchmark_index: float) -> float:
    """The CPU slowdown that makes a host of this (positive) BenchmarkIndex emulate Lighthouse's reference phone;
    never below 1 (no host is made faster)."""
    return max(1.0, round(DEFAULT_SLOWDOWN * benchmark_index / REFERENCE_INDEX, 1))


def benchmark_index(report: Report) -> float | None:
    """The host's BenchmarkIndex as Lighthouse measured it at the start of this run (None in a failed run)."""
    index = report.get("environment", {}).get("benchmarkIndex")
    return float(index) if isinstance(index, int | float) and index > 0 else None


def slowdown_used(report: Report) -> float | None:
    """The CPU slowdown the run applied."""
    value = report.get("configSettings", {}).get("throttling", {}).get("cpuSlowdownMultiplier")
    return float(value) if isinstance(value, int | float) else None


def needs_more_runs(report: Report) -> bool:
    """A first run below the performance budget is measured again before it is judged."""
    score = scores(report)["performance"]
    return score is None or score < BUDGET["performance"]


def median_run(reports: Sequence[Report]) -> Report:
    """The run whose performance is the median of the runs (an odd number of them)."""
    return sorted(reports, key=lambda r: scores(r)["performance"] or 0)[len(reports) // 2]


def failures(path: str, report: Report, tutorial: bool) -> list[str]:
    """What breaks the budget on this page (a TUTORIAL's, or not), shortest first: the category names and
    `transferred`."""
    if report.get("runtimeError"):
        return ["runtime error"]
    failed = [name for name, score in scores(report).items() if score is None or score < BUDGET[name]]
    if tutorial and transferred(report) > TUTORIAL_BYTES:
        failed.append("transferred")
    return failed


def item_label(item: Item, base: str = "") -> str | None:
    """What an audit's detail item points at: a URL (relative to the server's `base`), else a CSS selector
    and the element's opening HTML; with the item's description when it has one (a console message).
    A list section (a table of its own inside an insight) has no such target: None."""
    if item.get("type") == "list-section":
        return None
    node: Item = next((item[key] for key in ("node", "source") if isinstance(item.get(key), dict)), {})
    url = item.get("url") or (item.get("sourceLocation") or {}).get("url") or node.get("url")
    if isinstance(url, str) and url:
        label = url.removeprefix(f"{base}/") if base else url
    else:
        label = "  ".join(filter(None, (node.get("selector"), (node.get("snippet") or "")[:SNIPPET])))
    description = item.get("description")
    if isinstance(description, str) and description:
        label = f"{label}: {description}" if label else description
    return label or None


def failing_audits(report: Report, category: str, base: str = "") -> list[tuple[str, str, str, list[str]]]:
    """The audits that pull a category down, heaviest first: (id, title, displayValue, a few item labels)."""
    refs = report.get("categories", {}).get(category, {}).get("auditRefs", [])
    found = []
    for ref in sorted(refs, key=lambda r: -r.get("weight", 0)):
        audit = report.get("audits", {}).get(ref["id"], {})
        if audit.get("scoreDisplayMode") in SCORED and audit.get("score") is not None and audit["score"] < PASSED:
            items = (audit.get("details") or {}).get("items") or []
            labels = list(dict.fromkeys(filter(None, (item_label(item, base) for item in items))))
            found.append((ref["id"], audit.get("title", ""), audit.get("displayValue", ""), labels[:ITEMS_SHOWN]))
    return found


def heaviest_requests(report: Report, base: str = "", count: int = 5) -> list[tuple[str, int]]:
    """(url, bytes) of the largest transfers, for a page over its byte budget."""
    items = report.get("audits", {}).get("total-byte-weight", {}).get("details", {}).get("items", [])
    return [(item_label(item, base) or "?", int(item.get("totalBytes", 0))) for item in items[:count]]


def errored_audits(report: Report) -> dict[str, str]:
    """id -> message of the audits Lighthouse could not run (no score; they weigh nothing in a category)."""
    return {audit["id"]: (audit.get("errorMessage") or "").split("\n")[0]
            for audit in report.get("audits", {}).values() if audit.get("scoreDisplayMode") == "error"}


def format_line(path: str, report: Report, tutorial: bool, runs: Sequence[float | None] = (), width: int = 0) -> str:
    """`<path>  perf 0.97  a11y 1.00  bp 1.00  seo 1.00  212 KB`, with the performance runs when there were several."""
    if report.get("runtimeError"):
        error = report["runtimeError"]
        return f"{path:<{width}}  Lighthouse failed: {error.get('code', '')}: {error.get('message', '')}".rstrip()
    shown = "  ".join(f"{SHORT[name]} {'-' if score is None else f'{score:.2f}'}" for name, score in scores(report).items())
    line = f"{path:<{width}}  {shown}  {kb(transferred(report))}"
    index, slowdown = benchmark_index(report), slowdown_used(report)
    if index and slowdown:
        line += f"  cpu {slowdown:.1f}x (host index {index:.0f})"
    if len(runs) > 1:
        line += f"  (perf: median of {len(runs)} runs: {' '.join(f'{s:.2f}' for s in sorted(s or 0 for s in runs))})"
    failed = failures(path, report, tutorial)
    return line + (f"  FAILS: {', '.join(failed)}" if failed else "")


def failure_details(path: str, report: Report, tutorial: bool, base: str = "") -> list[str]:
    """Lines that say why a page breaks the budget: each failing category's audits, or its heaviest transfers;
    URLs relative to the server's `base`."""
    lines = [f"{path}:"]
    for failed in failures(path, report, tutorial):
        if failed == "runtime error":
            lines.append(f"  {report['runtimeError'].get('message', '')}")
        elif failed == "transferred":
            lines.append(f"  transferred {kb(transferred(report))} > {kb(TUTORIAL_BYTES)}; the heaviest:")
            lines += [f"    {kb(size):>7}  {url}" for url, size in heaviest_requests(report, base)]
        else:
            score = scores(report)[failed]
            lines.append(f"  {failed} {'-' if score is None else f'{score:.2f}'} < {BUDGET[failed]:.2f}:")
            for audit_id, title, value, labels in failing_audits(report, failed, base):
                lines.append(f"    {audit_id}: {title}" + (f" ({value})" if value else ""))
                lines += [f"      {label}" for label in labels]
    return lines


# --- axe-core's results --------------------------------------------------------------------------


def format_violation(path: str, scheme: str, violation: Violation) -> list[str]:
    """`<page> [<scheme>] <rule>: <help>` and the first elements it names."""
    targets = [" ".join(map(str, node.get("target", []))) for node in violation.get("nodes", [])]
    lines = [f"{path} [{scheme}] {violation['id']}: {violation.get('help', '')}"]
    lines += [f"    {target}" for target in targets[:ITEMS_SHOWN]]
    if len(targets) > ITEMS_SHOWN:
        lines.append(f"    and {len(targets) - ITEMS_SHOWN} more")
    return lines
