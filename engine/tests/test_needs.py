"""What a tutorial needs (`# tutorials-needs:`, conf.py's tutorials_needs), its runner class, and NEEDS=strict:
a tutorial the machine has too few GPUs for fails with one line saying what it needs and what it got."""

import json
import os
import subprocess
import sys

import pytest

from conftest import build, executed, one_line_error
from tutorials_site.commands import execute
from tutorials_site.core.errors import SiteError
from tutorials_site.core.project import ConfError, Project
from tutorials_site.core.runs import needs

ENGLISH = {"LANGUAGES": "en"}
DATA_PARALLEL = "beginner_source/data_parallel_tutorial.py"


@pytest.mark.parametrize(("value", "gpus"), [("cpu", 0), ("gpu", 1), ("gpus=2", 2), (" gpus = 8 ", 8), ("gpus=0", 0),
                                             ("gpus=1", 1)])
def test_a_need_is_cpu_gpu_or_a_number_of_gpus(value, gpus):
    assert needs.parse(value) == gpus


@pytest.mark.parametrize("value", ["", "GPU", "gpus", "gpus=", "gpus=-1", "gpus=1.5", "gpus=two", "gpus=２", "tpu",
                                   "cpu gpu", "gpus=2 # two"])
def test_anything_else_is_refused_saying_what_is_accepted(value):
    with pytest.raises(ValueError, match=r"is not cpu, gpu or gpus=N \(a whole number of GPUs\), written like gpus=2$"):
        needs.parse(value)


@pytest.mark.parametrize("value", ["gpus=257", "gpus=99999999999999999999999"])
def test_a_need_for_more_gpus_than_a_machine_has_is_refused(value):
    with pytest.raises(ValueError, match=r"asks for more GPUs than one machine has \(at most gpus=256\)"):
        needs.parse(value)


@pytest.mark.parametrize(("value", "declared"), [
    ("network", (None, True)), ("gpu network", (1, True)), ("network gpus = 2", (2, True)), ("cpu", (0, False)),
    (" network ", (None, True))])
def test_a_needs_line_declares_the_network_alone_or_with_the_gpus(value, declared):
    assert needs.parse_line(value) == declared


@pytest.mark.parametrize(("value", "message"), [
    ("", "names nothing: write cpu, gpu or gpus=N, and network where it downloads"),
    ("networks", "'networks' is not cpu, gpu or gpus=N (a whole number of GPUs), written like gpus=2, nor network"),
    ("network network", "'network' is not cpu, gpu or gpus=N (a whole number of GPUs), written like gpus=2, nor network"),
    ("gpu cpu network", "'gpu cpu' is not cpu, gpu or gpus=N (a whole number of GPUs), written like gpus=2, nor network"),
])
def test_a_needs_line_with_anything_else_is_refused(value, message):
    with pytest.raises(ValueError) as error:
        needs.parse_line(value)
    assert str(error.value) == message


def test_a_network_need_keeps_the_default_gpus_and_a_line_without_it_has_no_network(tmp_path):
    script = _project(tmp_path, 'tutorials_needs = "cpu"')
    script.write_text('"""Doc."""\n# tutorials-needs: network\n')
    site = Project.read(tmp_path)
    assert needs.of(site, site.tutorials[0]) == needs.Needs(0, 1, "conf.py's tutorials_needs", network=True)
    script.write_text('"""Doc."""\n# tutorials-needs: network gpus=2\n')
    assert needs.of(site, site.tutorials[0]) == needs.Needs(2, 2, "its tutorials-needs line", network=True)
    script.write_text('"""Doc."""\n# tutorials-needs: gpu\n')
    assert not needs.of(site, site.tutorials[0]).network


def test_the_runner_class_of_a_need():
    assert [needs.Needs(gpus, 1, "").runner_class for gpus in (0, 1, 2, 8)] == ["cpu", "gpu", "multi-gpu", "multi-gpu"]


def test_a_need_is_a_minimum_and_an_unmet_one_says_what_it_needs_and_what_it_got():
    need = needs.Needs(2, 48, "its tutorials-needs line")
    assert need.unmet("x.py", needs.Machine(2, "H100")) is None and need.unmet("x.py", needs.Machine(8, "H100")) is None
    assert need.unmet("x.py", needs.Machine(1, "NVIDIA H100")) == (
        "x.py:48: ERROR: needs 2 GPUs (its tutorials-needs line), got 1 GPU (NVIDIA H100); not run: NEEDS=strict "
        "runs a tutorial only where its needs are met (a multi-gpu runner; NEEDS=lenient runs it anyway)")
    assert "got no GPU;" in needs.Needs(1, 1, "").unmet("x.py", needs.Machine(0, ""))
    assert needs.Needs(0, 1, "").unmet("x.py", needs.Machine(0, "")) is None


NEEDS_DOC = '''"""
Needs
=====

A tutorial declares its hardware with a comment line of its own::

    # tutorials-needs: gpus=4
"""

TEXT = """
# tutorials-needs: cpu
"""
x = 1  # tutorials-needs: gpus=3
{line}
'''


def _project(tmp_path, conf=""):
    (tmp_path / "gallery").mkdir()
    (tmp_path / "gallery" / "README.txt").write_text("Gallery\n=======\n")
    (tmp_path / "conf.py").write_text('sphinx_gallery_conf = {"examples_dirs": ["gallery"], "gallery_dirs": ["g"], '
                                      '"filename_pattern": "."}\n' + conf)
    return tmp_path / "gallery" / "demo.py"


def test_only_a_comment_line_of_its_own_declares_and_else_the_default_applies(tmp_path):
    script = _project(tmp_path)
    script.write_text(NEEDS_DOC.format(line=""))  # in a docstring, in a string, after code: none counts
    [tutorial] = Project.read(tmp_path).tutorials
    assert needs.of(Project.read(tmp_path), tutorial) == needs.Needs(0, 1, "no tutorials-needs line: the default, cpu")
    script.write_text(NEEDS_DOC.format(line="  # tutorials-needs: cpu  "))
    line = NEEDS_DOC.splitlines().index("{line}") + 1
    assert needs.of(Project.read(tmp_path), tutorial) == needs.Needs(0, line, "its tutorials-needs line")


def test_a_malformed_or_second_line_is_refused_naming_the_file_and_line(tmp_path):
    script = _project(tmp_path)
    script.write_text('"""Doc."""\n# tutorials-needs: gpus=two\n')
    [tutorial] = Project.read(tmp_path).tutorials
    with pytest.raises(SiteError, match=r"^gallery/demo.py:2: tutorials-needs: 'gpus=two' is not cpu, gpu or gpus=N"):
        needs.of(Project.read(tmp_path), tutorial)
    script.write_text('"""Doc."""\n# tutorials-needs: cpu\nx = 1\n#tutorials-needs: gpu\n')
    with pytest.raises(SiteError, match=r"^gallery/demo.py:4: a second tutorials-needs line \(the first is line 2\); "
                                        "keep one$"):
        needs.of(Project.read(tmp_path), tutorial)


@pytest.mark.parametrize(("conf", "gpus", "origin"), [
    ('tutorials_needs = "cpu"', 0, "conf.py's tutorials_needs"),
    ('tutorials_needs = "gpu"', 1, "conf.py's tutorials_needs"),
    ('tutorials_needs = {"gallery": "gpus=4"}', 4, "conf.py's tutorials_needs"),
    ("tutorials_needs = {}", 0, "conf.py's tutorials_needs"),  # a gallery it does not name: the default
])
def test_conf_py_sets_the_default_for_every_gallery_or_per_gallery(tmp_path, conf, gpus, origin):
    _project(tmp_path, conf).write_text('"""Doc."""\n')
    site = Project.read(tmp_path)
    assert needs.of(site, site.tutorials[0]) == needs.Needs(gpus, 1, origin)


@pytest.mark.parametrize(("conf", "message"), [
    ('tutorials_needs = "gpus=many"', "conf.py: tutorials_needs: 'gpus=many' is not cpu, gpu or gpus=N"),
    ("tutorials_needs = 2", "conf.py: tutorials_needs: 2 is not cpu, gpu or gpus=N, nor a dict of them by gallery"),
    ('tutorials_needs = {"recipes": "cpu"}', "conf.py: tutorials_needs: 'recipes' is not a gallery's source folder "
                                            "(examples_dirs: gallery)"),
])
def test_a_bad_conf_py_default_is_refused_naming_the_setting(tmp_path, conf, message):
    _project(tmp_path, conf).write_text('"""Doc."""\n')
    site = Project.read(tmp_path)
    with pytest.raises(ConfError) as error:
        needs.of(site, site.tutorials[0])
    assert str(error.value).startswith(message)


def test_the_machine_is_what_torch_sees_in_the_tutorial_s_environment(tmp_path):
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("class cuda:\n    is_available = staticmethod(lambda: True)\n"
                                      "    device_count = staticmethod(lambda: 2)\n"
                                      "    get_device_name = staticmethod(lambda i: 'Fake GPU 80GB')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "fake")}
    gpus = ["/dev/nvidia0", "/dev/nvidia1"]  # where a GPU device exists, torch is asked
    assert execute.machine(env, gpus) == needs.Machine(2, "Fake GPU 80GB")
    assert execute.machine(env, []) == needs.Machine(0, "")  # no device: torch is not even imported
    (fake / "__init__.py").write_text("raise ImportError('no torch here')\n")
    assert execute.machine(env, gpus) == needs.Machine(0, "")  # no torch: no GPU
    assert execute.machine({**os.environ, "CUDA_VISIBLE_DEVICES": ""}) == needs.Machine(0, "")  # this machine


CPU_TUTORIAL = '''"""
A CPU tutorial
==============
"""

# tutorials-needs: cpu
print("ran on the CPU")
'''


def _stamp(builddir, name):
    return json.loads((builddir / "runs" / "beginner_source" / name / "stamp.json").read_text())


# The machine these builds run on, whatever this one has: torch sees no GPU.
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}


@pytest.mark.site
def test_strict_needs_fail_a_tutorial_the_machine_cannot_meet_and_lenient_runs_it_anyway(project_copy):
    (project_copy / "beginner_source" / "cpu_tutorial.py").write_text(CPU_TUTORIAL)
    builddir = project_copy / "_build"
    strict = build(project_copy, builddir, env={**ENGLISH, **NO_GPU, "NEEDS": "strict"})
    # No GPU seen; both DDP and Data Parallelism declare two (`# tutorials-needs: gpus=2`).
    line = (project_copy / DATA_PARALLEL).read_text().splitlines().index("# tutorials-needs: gpus=2") + 1
    error = (f"{DATA_PARALLEL}:{line}: ERROR: needs 2 GPUs (its tutorials-needs line), got no GPU; not run: "
             "NEEDS=strict runs a tutorial only where its needs are met (a multi-gpu runner; NEEDS=lenient runs it "
             "anyway)")
    assert strict.returncode != 0 and error in strict.stdout.splitlines()
    assert error in strict.stderr and "Traceback" not in strict.stderr
    assert executed(strict) == 1 and "ran on the CPU" in (builddir / "runs" / "beginner_source" / "cpu_tutorial" /
                                                          "result.json").read_text()
    assert not (builddir / "runs" / "beginner_source" / "data_parallel_tutorial").exists()  # never started
    assert not (builddir / "html").exists()  # nothing rendered

    lenient = build(project_copy, builddir, env={**ENGLISH, **NO_GPU})  # NEEDS unset: lenient, as `make html` on a laptop
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert executed(lenient) == 2  # the CPU tutorial's run is current
    assert (f"[execute] {DATA_PARALLEL}: note: ran on no GPU, written for 2 GPUs (its tutorials-needs line)"
            in lenient.stdout)
    assert _stamp(builddir, "data_parallel_tutorial")["needs_gpus"] == 2
    page = (builddir / "html" / "en" / "beginner" / "data_parallel_tutorial.html").read_text()
    assert "Output captured on CPU (no GPU) · written for 2 GPUs · torch" in page
    assert "tutorials-needs" not in page  # the run's own setting is not shown to readers
    cpu_page = (builddir / "html" / "en" / "beginner" / "cpu_tutorial.html").read_text()
    assert "Output captured on CPU (no GPU) · torch" in cpu_page

    # A run on less than its needs is not current for a strict build: it is tried again, and refused again.
    again = build(project_copy, builddir, env={**ENGLISH, **NO_GPU, "NEEDS": "strict"})
    assert again.returncode != 0 and error in again.stdout.splitlines() and executed(again) == 0
    assert _stamp(builddir, "data_parallel_tutorial")["needs_gpus"] == 2  # the lenient run is kept


@pytest.mark.site
def test_a_malformed_needs_line_or_needs_value_is_refused_before_anything_runs(project_copy):
    tutorial = project_copy / "beginner_source" / "cpu_tutorial.py"
    tutorial.write_text(CPU_TUTORIAL.replace("# tutorials-needs: cpu", "# tutorials-needs: gpus=2.5"))
    builddir = project_copy / "_build"
    result = build(project_copy, builddir, env=ENGLISH)
    assert one_line_error(result) == ("error: beginner_source/cpu_tutorial.py:6: tutorials-needs: 'gpus=2.5' is not "
                                      "cpu, gpu or gpus=N (a whole number of GPUs), written like gpus=2, nor network")
    assert "[execute]" not in result.stdout and not builddir.exists()
    tutorial.write_text(CPU_TUTORIAL)
    result = build(project_copy, builddir, env={**ENGLISH, "NEEDS": "yes"})
    assert one_line_error(result) == ("error: NEEDS: 'yes' is not strict (run a tutorial only where its needs are "
                                      "met) or lenient (run every one anyway, the default)")
    assert not builddir.exists()


@pytest.mark.site
def test_make_ci_build_enforces_needs_unless_told_lenient(project_copy):
    from conftest import tutorials_site

    result = tutorials_site(project_copy, "ci-build", LANGUAGES="en", **NO_GPU)
    assert result.returncode != 0 and "ERROR: needs 2 GPUs" in result.stdout
    assert not (project_copy / "_build" / "html").exists()


def test_shard_matrix_command_lists_the_classes_that_have_tutorials(project_copy):
    (project_copy / "beginner_source" / "cpu_tutorial.py").write_text(CPU_TUTORIAL)
    result = subprocess.run([sys.executable, "-m", "tutorials_site", "shard-matrix"], cwd=project_copy,
                            capture_output=True, text=True, env={**os.environ, "CLASS_SHARDS": "cpu=3 multi-gpu=2"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"include": [{"class": "cpu", "shard": 1, "shards": 1},
                                                     {"class": "multi-gpu", "shard": 1, "shards": 2},
                                                     {"class": "multi-gpu", "shard": 2, "shards": 2}]}
