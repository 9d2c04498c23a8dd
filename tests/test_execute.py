"""One tutorial, one process (commands.execute and commands.runner), with small tutorials made here.

Each tutorial runs as `python tutorial.py` would: processes it starts work under
every start method, what they print lands under the block that started them,
a hang or a crash is reported with the block's line, and nothing survives it.
"""

import textwrap
import time
from pathlib import Path

import psutil
import pytest

from tutorials_site.commands.execute import run_tutorial, timeout_for

HEADER = '"""\nA test tutorial\n===============\n"""\n'


def tutorial(tmp_path, *blocks, name="tutorial.py"):
    """A tutorial of code blocks separated as Sphinx-Gallery does (`# %%`)."""
    text = HEADER + "".join("\n# %%\n" + textwrap.dedent(block).strip() + "\n" for block in blocks)
    path = tmp_path / name
    path.write_text(text)
    return path


def run(path, timeout=120):
    return run_tutorial(path, path.parent / f"run-{path.stem}", path.parent, timeout=timeout,
                        label=f"beginner_source/{path.name}")


def outputs(outcome):
    return [block["output"] for block in outcome.result["blocks"]]


def line_of(path, text):
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)


DATASET = """
import torch
from torch.utils.data import DataLoader, Dataset

class Squares(Dataset):  # defined in the tutorial: workers must find it
    def __len__(self):
        return 8

    def __getitem__(self, index):
        return torch.tensor([index * index])
"""


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_dataloader_workers_run_under_every_start_method(tmp_path, method):
    path = tutorial(tmp_path, DATASET, f"""
        if __name__ == "__main__":
            loader = DataLoader(Squares(), batch_size=4, num_workers=2, multiprocessing_context="{method}")
            print("batches:", [batch.flatten().tolist() for batch in loader])
        """)
    outcome = run(path)
    assert outcome.ok, outcome.error + "\n" + "\n".join(outputs(outcome))
    assert outputs(outcome)[1] == "batches: [[0, 1, 4, 9], [16, 25, 36, 49]]\n"


def test_spawned_ranks_print_under_the_block_that_started_them_in_order(tmp_path):
    path = tutorial(tmp_path, """
        import torch.multiprocessing as mp

        def work(rank, size):  # defined in the tutorial, found by the spawned children
            print(f"rank {rank} of {size} says hello")
        """, """
        if __name__ == "__main__":  # spawned children import the tutorial: only the parent runs this
            print("before spawn")
            mp.spawn(work, args=(2,), nprocs=2)
            print("after spawn")
        """, """
        import multiprocessing

        def square(x):
            return x * x

        if __name__ == "__main__":
            with multiprocessing.get_context("spawn").Pool(2) as pool:
                print("pool:", pool.map(square, range(5)))
        """)
    outcome = run(path)
    assert outcome.ok, outcome.error
    first, spawned, pooled = outputs(outcome)
    assert first == ""
    lines = spawned.splitlines()
    assert lines[0] == "before spawn" and lines[-1] == "after spawn"
    assert sorted(lines[1:-1]) == ["rank 0 of 2 says hello", "rank 1 of 2 says hello"]
    assert pooled == "pool: [0, 1, 4, 9, 16]\n"


def test_output_written_below_python_by_a_child_is_captured(tmp_path):
    path = tutorial(tmp_path, """
        import subprocess
        print("parent first")
        subprocess.run(["echo", "a child process, writing to its file descriptor 1"], check=True)
        print("parent last")
        """)
    outcome = run(path)
    assert outputs(outcome) == ["parent first\na child process, writing to its file descriptor 1\nparent last\n"]


def test_a_hanging_tutorial_is_killed_with_its_children_and_names_its_block(tmp_path):
    pids = tmp_path / "pids.txt"
    path = tutorial(tmp_path, 'print("starting")', f"""
        import multiprocessing, os, time

        def sleeper():
            time.sleep(1000)

        if __name__ == "__main__":
            child = multiprocessing.get_context("spawn").Process(target=sleeper)
            child.start()
            open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
            time.sleep(1000)
        """)
    started = time.perf_counter()
    outcome = run(path, timeout=4)
    assert time.perf_counter() - started < 15
    block = line_of(path, "import multiprocessing, os, time")
    assert not outcome.ok
    assert outcome.error == f"beginner_source/tutorial.py:{block}: ERROR: tutorial timed out after 4 s"
    assert outputs(outcome)[0] == "starting\n"
    assert [pid for pid in map(int, pids.read_text().split()) if psutil.pid_exists(pid)] == []


@pytest.mark.parametrize(("code", "message"), [
    ("import ctypes\nctypes.string_at(0)", "tutorial died from signal SIGSEGV"),
    ("import os\nos._exit(3)", "tutorial exited with status 3"),
])
def test_a_tutorial_that_dies_names_its_block_and_how(tmp_path, code, message):
    path = tutorial(tmp_path, 'print("fine so far")', code)
    outcome = run(path)
    block = line_of(path, code.splitlines()[0])
    assert not outcome.ok and outcome.error.startswith(f"beginner_source/tutorial.py:{block}: ERROR: {message}")
    assert outputs(outcome)[0] == "fine so far\n"


def test_an_exception_names_its_line_shows_the_traceback_and_stops_the_run(tmp_path):
    path = tutorial(tmp_path, "value = 1", "print(value / 0)", 'print("never")')
    outcome = run(path)
    line = line_of(path, "print(value / 0)")
    assert outcome.error == f"beginner_source/tutorial.py:{line}: ERROR: tutorial failed: ZeroDivisionError: division by zero"
    assert len(outcome.result["blocks"]) == 2  # the third block did not run
    assert "Traceback" in outputs(outcome)[1] and "ZeroDivisionError" in outputs(outcome)[1]
    assert "runner.py" not in outputs(outcome)[1]  # the reader sees the tutorial's frames only


def test_main_module_last_expression_figures_and_seeds(tmp_path):
    path = tutorial(tmp_path, """
        import random
        print(__name__, __file__ == %r, __doc__.strip().splitlines()[0])
        print(random.random())
        """ % str(tmp_path / "tutorial.py"), """
        import matplotlib.pyplot as plt
        plt.plot([1, 2, 3])
        {"a": 1}
        """)
    first, second = run(path), run(path)
    assert first.ok and outputs(first) == outputs(second)  # seeded: the same numbers every run
    assert outputs(first)[0].startswith("__main__ True A test tutorial\n")
    assert outputs(first)[1] == "{'a': 1}\n"
    record = first.result["blocks"][1]
    assert record["images"] == ["sphx_glr_tutorial_001.png"]
    assert (tmp_path / "run-tutorial" / "images" / "sphx_glr_tutorial_001.png").read_bytes()[:4] == b"\x89PNG"
    assert first.peak_rss_bytes > 0 and first.result["hardware"]["device"] == "CPU"


def test_what_one_tutorial_changes_never_reaches_the_next(tmp_path):
    changer = tutorial(tmp_path, """
        import os, torch, matplotlib
        torch.set_default_dtype(torch.float64)
        os.chdir("/")
        os.environ["TUTORIAL_LEFTOVER"] = "1"
        matplotlib.rcParams["lines.linewidth"] = 9.0
        """, name="changer.py")
    reader = tutorial(tmp_path, """
        import os, torch, matplotlib
        print(torch.get_default_dtype(), os.getcwd() == %r, os.environ.get("TUTORIAL_LEFTOVER"),
              matplotlib.rcParams["lines.linewidth"])
        """ % str(tmp_path), name="reader.py")
    assert run(changer).ok
    assert outputs(run(reader)) == ["torch.float32 True None 1.5\n"]


def test_peak_memory_counts_the_children(tmp_path):
    quiet = tutorial(tmp_path, "print(1)", name="quiet.py")
    hungry = tutorial(tmp_path, """
        import multiprocessing, time

        def hold():
            block = bytearray(300 * 2**20)
            block[::4096] = b"x" * len(block[::4096])  # touch every page
            time.sleep(1)

        if __name__ == "__main__":
            child = multiprocessing.get_context("fork").Process(target=hold)
            child.start()
            child.join()
        """, name="hungry.py")
    assert run(hungry).peak_rss_bytes > run(quiet).peak_rss_bytes + 200 * 2**20


def test_timeout_comes_from_the_tutorial_or_the_default(tmp_path):
    plain = tutorial(tmp_path, "print(1)", name="plain.py")
    assert timeout_for(plain, 1800) == 1800
    own = tutorial(tmp_path, "# tutorials-timeout: 120\nprint(1)", name="own.py")
    assert timeout_for(own, 1800) == 120
    bad = tutorial(tmp_path, "# tutorials-timeout: soon\nprint(1)", name="bad.py")
    with pytest.raises(ValueError, match=rf"bad.py:{line_of(bad, 'tutorials-timeout')}: tutorials-timeout: 'soon'"):
        timeout_for(bad, 1800)


@pytest.fixture(autouse=True)
def no_process_left_behind(tmp_path):
    """After each test, no process runs in its folder: not the runner, not a worker, not an orphan."""
    yield
    time.sleep(0.2)
    left = []
    for process in psutil.process_iter(["pid", "cwd", "cmdline"]):
        if process.info["cwd"] and Path(process.info["cwd"]).is_relative_to(tmp_path):
            left.append(process.info)
    assert left == []
