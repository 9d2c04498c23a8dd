"""sphinxext.provenance: the line under a tutorial's intro saying where its output was captured, from its stamp."""

import dataclasses
from types import SimpleNamespace

import pytest
from docutils import nodes

from conftest import FIXTURES
from tutorials_site.core.project import Project
from tutorials_site.core.runs.fingerprint import tutorial_digest
from tutorials_site.core.runs.records import Hardware, Stamp
from tutorials_site.core.runs.stamps import STAMP_META, stamp_path
from tutorials_site.sphinxext import provenance

PAGE = "beginner/data_parallel_tutorial"
SCRIPT = FIXTURES / "beginner_source" / "data_parallel_tutorial.py"  # the tests' own: fake_app's project (conftest) has it
CPU = Hardware(device="CPU", gpus=0, machine="x86_64", torch="2.13.0+cpu", cuda=None)


def stamp(hardware=CPU, needs_gpus=0, source=None, failed=False, unfinished=False):
    site = Project.read(FIXTURES)
    digest = tutorial_digest(site, next(t for t in site.tutorials if t.path == SCRIPT))  # with what its run sees
    return Stamp(source=source or digest.code, code_lines=digest.lines,
                 environment="e" * 64, outputs="o" * 64, seconds=1.5, failed=failed, peak_rss_mb=100.0,
                 gpu_peak_mb=(), hardware=hardware, commit="0123abc", date="2025-06-01 12:00 UTC",
                 needs_gpus=needs_gpus, files=(), unfinished=unfinished)  # a page's copy: without the seal


def generated_page(docname):
    """The reST sphinx-gallery writes for a tutorial: its label, the intro, then its blocks, each after a marker."""
    return (f".. _sphx_glr_{docname.replace('/', '_')}.py:\n\nA title\n=======\n\nThe intro.\n\n"
            ".. GENERATED FROM PYTHON SOURCE LINES 8-10\n\n.. code-block:: Python\n\n    x = 1\n\n"
            ".. GENERATED FROM PYTHON SOURCE LINES 11-12\n\nMore text.\n")


def test_the_directive_takes_the_place_of_the_first_block_marker_and_every_line_keeps_its_number(fake_app):
    source = [generated_page(PAGE)]
    provenance.add_directive(fake_app(), PAGE, source)
    before, after = generated_page(PAGE).splitlines(), source[0].splitlines()
    changed = [(number, old, new) for number, (old, new) in enumerate(zip(before, after), 1) if old != new]
    assert len(after) == len(before) and changed == [
        (8, ".. GENERATED FROM PYTHON SOURCE LINES 8-10", ".. tutorial-provenance::")]


def test_a_page_that_is_no_tutorial_gets_no_directive(fake_app):
    source = [generated_page("beginner/index")]
    provenance.add_directive(fake_app(), "beginner/index", source)
    assert source == [generated_page("beginner/index")]


def line(parts):
    """The provenance line as text, machine values in [brackets] (they are set as code)."""
    return "".join(f"[{part.astext()}]" if isinstance(part, nodes.literal) else part.astext() for part in parts)


@pytest.mark.parametrize("hardware, needs, expected", [
    (CPU, 2, "Output captured on CPU (no GPU) · written for 2 GPUs · torch [2.13.0+cpu] · commit [0123abc] · "
             "[2025-06-01 12:00 UTC]"),
    (Hardware(device="NVIDIA H100", gpus=1, machine="x86_64", torch="2.13.0", cuda="12.8"), 1,
     "Output captured on [NVIDIA H100] (1 GPU) · torch [2.13.0] · CUDA [12.8] · commit [0123abc] · "
     "[2025-06-01 12:00 UTC]"),
    (Hardware(device="NVIDIA H100", gpus=4, machine="x86_64", torch="2.13.0", cuda="12.8"), 2,
     "Output captured on [NVIDIA H100] (4 GPUs) · torch [2.13.0] · CUDA [12.8] · commit [0123abc] · "
     "[2025-06-01 12:00 UTC]"),
    (Hardware(device="NVIDIA H100", gpus=1, machine="x86_64", torch=None, cuda=None), 1,
     "Output captured on [NVIDIA H100] (1 GPU) · torch [-] · commit [0123abc] · [2025-06-01 12:00 UTC]"),
])
def test_the_line_says_the_device_the_gpus_it_lacked_torch_cuda_commit_and_date(hardware, needs, expected, untranslated):
    assert line(provenance.describe(stamp(hardware, needs))) == expected


@pytest.mark.parametrize("sandboxed, network, said", [
    (True, False, ""), (False, False, " · run without a sandbox"), (True, True, " · used the network"),
    (False, True, " · run without a sandbox · used the network")])
def test_the_line_says_a_run_without_a_sandbox_and_one_that_used_the_network(sandboxed, network, said, untranslated):
    shown = dataclasses.replace(stamp(), sandboxed=sandboxed, network=network)
    assert line(provenance.describe(shown)) == f"Output captured on CPU (no GPU){said} · torch [2.13.0+cpu] · " \
                                               "commit [0123abc] · [2025-06-01 12:00 UTC]"


def test_the_line_is_in_the_page_s_language_with_the_machine_s_values_as_they_are(sphinx_catalog):
    sphinx_catalog("ko", {"Output captured on {where}": "{where}에서 캡처한 출력", "{device} (1 GPU)": "{device} (GPU 1개)"})
    hardware = Hardware(device="NVIDIA H100", gpus=1, machine="x86_64", torch="2.13.0", cuda=None)
    assert line(provenance.describe(stamp(hardware, 1))).startswith("[NVIDIA H100] (GPU 1개)에서 캡처한 출력 · torch")


def run_directive(app, docname=PAGE):
    """The directive's nodes on a page being read, as Sphinx runs it (its env from the document's settings)."""
    app.env.docname = docname
    state = SimpleNamespace(document=SimpleNamespace(settings=SimpleNamespace(env=app.env)))
    directive = provenance.ProvenanceDirective("tutorial-provenance", [], {}, [], 7, 0, "", state,
                                               SimpleNamespace(reporter=None))
    return directive.run()


def test_a_current_stamp_gives_the_line_and_the_page_s_stamp(fake_app):
    app = fake_app()
    current = stamp(needs_gpus=2)
    current.write(stamp_path(app.srcdir / f"{PAGE}.py"))
    [box] = run_directive(app)
    assert isinstance(box, nodes.container) and box["classes"] == ["tutorial-provenance"]
    assert line(box.children[0].children) == line(provenance.describe(current))
    assert app.env.metadata[PAGE] == {STAMP_META: current.to_json()}  # what add_stamp_meta writes into the page
    assert app.env.dependencies[PAGE] == {str(stamp_path(app.srcdir / f"{PAGE}.py"))}


@pytest.mark.parametrize("unfinished, listed, kind, classes, said", [
    (False, False, nodes.error, ["tutorial-failed"], "This tutorial failed when this page was built"),
    (True, False, nodes.error, ["tutorial-failed"], "This tutorial did not finish when this page was built"),
    (False, True, nodes.note, ["tutorial-failed", "tutorial-failed-expected"], "This tutorial fails on purpose"),
    # expected_failing_examples excuses a run that raised, never one that did not finish
    (True, True, nodes.error, ["tutorial-failed"], "This tutorial did not finish when this page was built"),
])
def test_a_failed_run_gets_a_banner_over_its_line_saying_how_it_failed(fake_app, unfinished, listed, kind, classes,
                                                                       said):
    options = {**Project.read(FIXTURES).options,
               "expected_failing_examples": [SCRIPT.relative_to(FIXTURES).as_posix()] if listed else []}
    app = fake_app(sphinx_gallery_conf=options)
    failed = stamp(failed=True, unfinished=unfinished)
    failed.write(stamp_path(app.srcdir / f"{PAGE}.py"))
    banner, box = run_directive(app)
    assert isinstance(banner, kind) and banner["classes"] == classes and banner.astext().startswith(said)
    assert box["classes"] == ["tutorial-provenance"] and app.env.metadata[PAGE] == {STAMP_META: failed.to_json()}


def test_a_run_that_passed_gets_no_banner(fake_app):
    app = fake_app()
    stamp().write(stamp_path(app.srcdir / f"{PAGE}.py"))
    assert [node["classes"] for node in run_directive(app)] == [["tutorial-provenance"]]


@pytest.mark.parametrize("written", [False, True])
def test_without_a_stamp_of_the_current_source_the_page_says_it_was_not_run(fake_app, written):
    app = fake_app()
    if written:  # a run of another version of the script
        stamp(source="0" * 64).write(stamp_path(app.srcdir / f"{PAGE}.py"))
    [box] = run_directive(app)
    assert isinstance(box, nodes.warning) and box["classes"] == ["tutorial-not-executed"]
    assert box.astext().startswith("This page was built without running the tutorial")
    assert PAGE not in app.env.metadata
    # A page with no stamp depends on none: one that comes later comes with the page rendered again.
    assert app.env.dependencies[PAGE] == ({str(stamp_path(app.srcdir / f"{PAGE}.py"))} if written else set())


def test_the_page_s_head_carries_its_stamp_escaped(fake_app):
    context = {"metatags": "<meta charset=x>", "meta": {STAMP_META: '{"commit": "<&>"}'}}
    provenance.add_stamp_meta(fake_app(), PAGE, "page.html", context, None)
    assert context["metatags"] == ('<meta charset=x>\n<meta name="tutorial-execution-stamp" '
                                   'content="{&quot;commit&quot;: &quot;&lt;&amp;&gt;&quot;}">')
    unstamped = {"metatags": "<meta charset=x>", "meta": {}}
    provenance.add_stamp_meta(fake_app(), "index", "page.html", unstamped, None)
    assert unstamped["metatags"] == "<meta charset=x>"


def test_setup_adds_the_directive_and_connects_its_handlers(fake_app):
    app = fake_app()
    assert app.directives["tutorial-provenance"] is provenance.ProvenanceDirective
    assert {("source-read", provenance.add_directive), ("html-page-context", provenance.add_stamp_meta)} <= {
        (event, handler) for event, handler, _ in app.connected}
