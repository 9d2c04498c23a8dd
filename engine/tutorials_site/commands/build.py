"""`tutorials-site html`, `html-noplot`, `assemble`: a build in three stages, each in a module of its own.

1. Preparation (commands.prepare): conf.py read, the tutorials selected, and what would fail later refused,
   before anything runs.
2. Execution (commands.execution): each tutorial whose run is not current (core.runs.runs) runs once, as
   `python tutorial.py` would, in a process of its own (commands.execute), with a time limit; its run serves
   every language. `tutorials-site assemble` executes nothing: it takes the runs the shards left (core.runs.shards).
3. Rendering (commands.render): each language gets its own Sphinx source tree under <builddir>/src/<seg>/
   (core.site.staging) and its own output under <builddir>/html/<seg>/; sphinx-gallery renders the pages
   from the runs (sphinxext.gallery) and executes nothing itself; then the site root's index and records.
"""

from collections.abc import Sequence
from pathlib import Path

from ..core import project
from ..core.errors import Failed, UsageError
from ..core.runs import shards
from ..core.site import checks
from ..core.site.settings import Settings
from .execution import (
    execute_shard,
    expectations,
    from_shards,
    run_tutorials,
    tutorials_done,
    unrun_keys,
    unstamped_keys,
)
from .prepare import build_failed, prepare
from .render import render_site

# The tutorials' part of the last line of a build that executes nothing.
WITHOUT_OUTPUT = "none executed (pages without output)"
FROM_SHARDS = "none executed (the shards' runs)"


def html(settings: Settings) -> None:
    """`tutorials-site html`: execute what is not current, then build the selected languages.

    With SHARD ("i/N"), only that shard's tutorials are executed, and nothing is rendered:
    `tutorials-site assemble` renders the pages from the shards' runs. Where conf.py sets plot_gallery to False,
    nothing is executed: the pages show no output, as with `tutorials-site html-noplot`.
    """
    build = prepare(settings, executes_nothing=False)
    if build.without_output:
        render_site(build, [], noplot=True, what=WITHOUT_OUTPUT)
    elif settings.shard:
        execute_shard(build, settings.shard)
    else:
        executed = run_tutorials(settings, build.site, [t for t in build.selected if t.executed], build.present,
                                 build.log)
        if executed.stops:
            raise build_failed(executed.failed, build.log)
        shown_without_output = (unrun_keys(build) if settings.tutorials else []) + unstamped_keys(build)
        render_site(build, expectations(build, executed.failed), noplot=False, what=tutorials_done(executed),
                    unrun=shown_without_output)


def html_noplot(settings: Settings) -> None:
    """`tutorials-site html-noplot`: build the selected languages, executing nothing: the pages show no output."""
    render_site(prepare(settings, executes_nothing=True), [], noplot=True, what=WITHOUT_OUTPUT)


def assemble(settings: Settings, shard_builddirs: Sequence[Path]) -> None:
    """`tutorials-site assemble`: render the site once from the shards' runs, executing nothing, and validate it."""
    if settings.shard:  # it renders what every shard ran
        raise UsageError("SHARD: `tutorials-site assemble` renders the runs of every shard; leave SHARD out of it")
    site = project.current(settings.root)
    merged = shards.merge(site, shard_builddirs, settings.tree, settings.runs_key)
    print(f"[assemble] {len(merged)} executed tutorial run(s) from {len(shard_builddirs)} shard(s)", flush=True)
    build = prepare(settings, executes_nothing=True)
    if build.without_output:
        render_site(build, [], noplot=True, what=WITHOUT_OUTPUT)
    else:
        render_site(build, from_shards(build), noplot=False, what=FROM_SHARDS)
    htmldir = settings.tree.html
    problems = (checks.check_stamps(site, htmldir, settings.langs, settings.runs_key, sandboxed=settings.sandboxed,
                                    pythonpath=settings.pythonpath) + checks.check_links(htmldir))
    if problems:
        print("\n".join(problems))
        raise Failed(f"[assemble] the assembled site does not validate ({len(problems)} problem(s))")
    print(f"[assemble] {htmldir}: every tutorial executed, every language present, every link whole")
