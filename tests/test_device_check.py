"""The GPU check (.ci/device_check.py, `make device-check`): one line on a machine without a GPU; on one with GPUs, the
tutorials its GPUs fit, and a summary of what ran where; the bundle it carries within its limit."""

import importlib.util
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from tutorials_site.core.layout import BuildTree
from tutorials_site.core.project import Project
from tutorials_site.core.runs import runs
from tutorials_site.core.runs.records import Hardware, Stamp

SPEC = importlib.util.spec_from_file_location("device_check", ROOT / ".ci" / "device_check.py")
device_check = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(device_check)

TUTORIAL = '"""\n{name}\n{line}\n\nIt runs.\n"""\n\n# tutorials-needs: {needs}\nprint("ran")\n'


@pytest.fixture
def site(tmp_path):
    """A site of three tutorials: for the CPU, one GPU and two."""
    (tmp_path / "gallery").mkdir()
    (tmp_path / "gallery" / "README.txt").write_text("Gallery\n=======\n")
    for name, needs in (("cpu_tutorial", "cpu"), ("gpu_tutorial", "gpu"), ("pair_tutorial", "gpus=2")):
        (tmp_path / "gallery" / f"{name}.py").write_text(TUTORIAL.format(name=name, line="=" * len(name), needs=needs))
    (tmp_path / "conf.py").write_text("sphinx_gallery_conf = {'examples_dirs': ['gallery'], 'gallery_dirs': ['g'], "
                                     "'filename_pattern': r'\\.py$'}\n")
    return Project.read(tmp_path)


def test_without_a_gpu_it_says_so_in_one_line(tmp_path):
    # No nvidia-smi on the PATH: the machine of every test run here.
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}/usr/bin:/bin"}
    result = subprocess.run([sys.executable, str(ROOT / ".ci" / "device_check.py"), "check"], capture_output=True,
                            text=True, env=env)
    assert result.returncode == 0 and result.stdout.splitlines() == [device_check.NO_GPU] and not result.stderr


def test_the_gpus_nvidia_smi_lists_are_counted(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text('#!/bin/sh\necho "GPU 0: NVIDIA H200 (UUID: GPU-a)"\necho "GPU 1: NVIDIA H200 (UUID: GPU-b)"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert device_check.gpus_here() == 2


def test_two_gpus_run_what_needs_two_or_fewer_and_one_gpu_runs_everything_on_it(site):
    def labels(found):
        return [t.rel.stem for t in found]

    chosen, skipped = device_check.select(site, 2)
    assert labels(chosen) == ["cpu_tutorial", "gpu_tutorial", "pair_tutorial"] and skipped == []
    chosen, skipped = device_check.select(site, 1)
    assert labels(chosen) == ["cpu_tutorial", "gpu_tutorial", "pair_tutorial"]  # the pair's one process, on the GPU
    four = site.root / "gallery" / "four_tutorial.py"
    four.write_text(TUTORIAL.format(name="four_tutorial", line="=" * 13, needs="gpus=4"))
    chosen, skipped = device_check.select(Project.read(site.root), 2)
    assert [(t.rel.stem, why) for t, why in skipped] == [("four_tutorial", "needs 4 GPUs, this machine has 2 GPUs")]


def test_the_summary_says_where_each_ran_its_gpu_memory_and_why_one_was_skipped(site, tmp_path):
    tree = BuildTree(tmp_path / "build")
    hardware = Hardware(device="NVIDIA H200", gpus=2, machine="x86_64", torch="2.13.0+cu130", cuda="13.0")
    ran, failed, skipped = site.tutorials
    for tutorial, is_failed in ((ran, False), (failed, True)):
        Stamp(source="s" * 64, environment="e" * 64, outputs="o" * 64, seconds=12.5, failed=is_failed,
              peak_rss_mb=2048.0, gpu_peak_mb=(1536.0, 1530.0), hardware=hardware, commit="abc", date="d",
              files=()).write(tree.run_dir(tutorial.key) / runs.STAMP)
    text = device_check.summary(site, tree.root, 2, [ran, failed], [(skipped, "needs 4 GPUs")], "the machine's", 95.2, 1)
    assert text.startswith("# Device check: 2 GPU(s), build failed (exit 1) in 95 s\n")
    assert "| gallery/cpu_tutorial.py | ran | 12.5 | NVIDIA H200 (2 GPU) | 2.13.0+cu130 (CUDA 13.0) | 1536, 1530 | 2048 |" in text
    assert "| gallery/gpu_tutorial.py | failed |" in text
    assert "| gallery/pair_tutorial.py | skipped: needs 4 GPUs |" in text


def test_the_bundle_carries_the_lock_s_pins_but_the_machine_s_torch_family():
    pins = {name.lower(): version for name, version, _ in device_check.locked_pins()}
    assert "sphinx" in pins and "sphinx-gallery" in pins
    assert not {name for name in pins if device_check.FAMILY.match(name)}
    assert all(hashes for _, _, hashes in device_check.locked_pins())  # each checked against the lock's hashes
