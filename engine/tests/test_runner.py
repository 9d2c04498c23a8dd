"""commands.runner and commands.execute: one tutorial, one process, as `python tutorial.py` would run it.

Each test writes small tutorials into its tmp_path. Every process they start
carries a mark in its environment, and once a test is over, no process with
that mark may be left.
"""

import dataclasses
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import textwrap
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest

from tutorials_site.commands.execute import OutputRefused, RunOptions, run_tutorial, sandbox_here, timeout_for
from tutorials_site.core.runs.records import RunError
from tutorials_site.core.runs.runs import MAX_TIMEOUT, Progress, parse_timeout, read_progress, unfinished_reason
from tutorials_site.core.terminal import OutputLimits
from tutorials_site.core.tutorial_settings import setting_comments

ROOT = Path(__file__).resolve().parents[1]
HEADER = '"""\nA test tutorial\n===============\n"""\n'
MARK = "TUTORIALS_SITE_RUNNER_TEST"
# sphinx-gallery's defaults, for a tutorial of the gallery `beginner`.
OPTIONS = RunOptions.defaults(ROOT, "beginner/images")
SANDBOX = sandbox_here(ROOT, ())  # this machine's (the tests need one: .ci/run installs bubblewrap)


def tutorial(tmp_path, *blocks, name="demo.py"):
    """A tutorial of code blocks separated as Sphinx-Gallery does (`# %%`); each block starts right after one."""
    path = tmp_path / name
    path.write_text(HEADER + "".join("\n# %%\n" + textwrap.dedent(block).strip() + "\n" for block in blocks))
    return path


def line_of(path, text):
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def outputs(outcome):
    """What each block's output shows: its printed text (and the repr of a last expression, after a newline),
    then the traceback of a block that raised."""
    return ["".join(block.texts) for block in outcome.result.blocks]


def live(pids):
    """Those of PIDS still running (a zombie waiting for its reaper does not count), after up to 5 s."""
    deadline = time.monotonic() + 5
    while True:
        running = []
        for pid in pids:
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    running.append(pid)
            except psutil.NoSuchProcess:
                pass
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.1)


def marked(mark):
    return [p.pid for p in psutil.process_iter(["environ"]) if (p.info["environ"] or {}).get(MARK) == mark]


@pytest.fixture
def run(runs_tutorials, tmp_path):
    """run(path, timeout=60, rundir=None, options=OPTIONS, confined=SANDBOX, workdir=tmp_path, ...): run_tutorial in
    this machine's sandbox; afterwards, nothing it started may be left.

    run.env is the environment the tutorials get, mark included."""
    mark = uuid.uuid4().hex
    env = {key: value for key, value in os.environ.items() if key != "X"}
    env[MARK] = mark

    def run(path, timeout=60, rundir=None, options=OPTIONS, confined=SANDBOX, workdir=tmp_path, **more):
        return run_tutorial(path, rundir or tmp_path / f"run-{path.stem}", workdir, options, timeout=timeout,
                            label=f"beginner_source/{path.name}", env=env, confined=confined, **more)

    run.env, run.mark = env, mark
    yield run
    assert live(marked(mark)) == []


DATASET = """
import torch
from torch.utils.data import DataLoader, Dataset

class Squares(Dataset):  # defined in the tutorial: spawn and forkserver workers must find it
    def __len__(self):
        return 8

    def __getitem__(self, index):
        return torch.tensor([index * index])

def announce(worker_id):
    print(f"worker {worker_id} ready")
"""


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_dataloader_workers_work_and_print_under_every_start_method(tmp_path, run, method):
    path = tutorial(tmp_path, DATASET, f"""
        if __name__ == "__main__":
            loader = DataLoader(Squares(), batch_size=4, num_workers=2, multiprocessing_context="{method}",
                                worker_init_fn=announce)
            print("batches:", [batch.flatten().tolist() for batch in loader])
        """)
    outcome = run(path)
    assert outcome.ok, outcome.error
    first, output = outputs(outcome)
    assert first == ""
    lines = output.splitlines()
    assert sorted(lines[:2]) == ["worker 0 ready", "worker 1 ready"]
    assert lines[2:] == ["batches: [[0, 1, 4, 9], [16, 25, 36, 49]]"]


def test_spawned_children_print_under_the_block_that_started_them(tmp_path, run):
    path = tutorial(tmp_path, """
        import multiprocessing

        def greet(rank):
            print(f"rank {rank} says hello")

        def square(x):
            return x * x
        """, """
        if __name__ == "__main__":  # spawned children re-run the tutorial: only the parent does this
            print("before")
            context = multiprocessing.get_context("spawn")
            ranks = [context.Process(target=greet, args=(rank,)) for rank in range(2)]
            for process in ranks:
                process.start()
            for process in ranks:
                process.join()
            print("after")
        """, """
        if __name__ == "__main__":
            with multiprocessing.get_context("spawn").Pool(2) as pool:
                print(pool.map(square, range(5)))
        """)
    outcome = run(path)
    assert outcome.ok, outcome.error
    first, ranks, pool = outputs(outcome)
    assert first == ""
    lines = ranks.splitlines()
    assert (lines[0], sorted(lines[1:3]), lines[3:]) == ("before", ["rank 0 says hello", "rank 1 says hello"], ["after"])
    assert pool == "[0, 1, 4, 9, 16]\n"


def test_parent_and_children_output_keep_their_order(tmp_path, run):
    path = tutorial(tmp_path, """
        import multiprocessing, os, subprocess, sys, warnings
        print("parent 1")
        subprocess.run([sys.executable, "-c", "print('child process')"], check=True)
        print("parent 2")
        child = multiprocessing.get_context("fork").Process(target=print, args=("forked child",))
        child.start()
        child.join()
        print("parent 3", end="")
        os.write(1, b" and C level\\n")
        warnings.warn("careful")
        """)
    outcome = run(path)
    assert outcome.ok, outcome.error
    [output] = outputs(outcome)
    assert output.startswith("parent 1\nchild process\nparent 2\nforked child\nparent 3 and C level\n")
    assert "UserWarning: careful" in output


def test_a_hanging_tutorial_is_killed_with_all_its_processes(tmp_path, run):
    path = tutorial(tmp_path, """
        print("started")
        """, """
        import multiprocessing, os, subprocess, sys, time
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
        worker = multiprocessing.get_context("fork").Process(target=time.sleep, args=(1000,))
        worker.start()
        with open("pids.txt", "w") as pids:
            pids.write(f"{os.getpid()} {sleeper.pid} {worker.pid}")
        time.sleep(1000)
        """)
    started = time.monotonic()
    outcome = run(path, timeout=3)
    assert time.monotonic() - started < 10
    line = line_of(path, "import multiprocessing")
    assert not outcome.ok
    assert outcome.error == f"beginner_source/demo.py:{line}: ERROR: tutorial timed out after 3 s"
    # The block that was running shows how the run ended, where a block that raised shows its traceback.
    assert outputs(outcome) == ["started\n", "tutorial timed out after 3 s"]
    assert outcome.result.error == RunError(line=line, block_line=line, message="tutorial timed out after 3 s")
    assert len((tmp_path / "pids.txt").read_text().split()) == 3
    assert marked(run.mark) == []  # gone by the time run_tutorial returns


@pytest.mark.parametrize("code, message", [
    ("import ctypes\nctypes.string_at(0)", "tutorial died from signal SIGSEGV"),
    ("import os\nos._exit(3)", "tutorial exited with status 3 (os._exit, or see runner.log)"),
])
def test_a_crash_is_reported_with_the_running_block(tmp_path, run, code, message):
    path = tutorial(tmp_path, 'print("fine")', code)
    outcome = run(path)
    line = line_of(path, code.splitlines()[0])
    assert outcome.error == f"beginner_source/demo.py:{line}: ERROR: {message}"
    assert outputs(outcome)[0] == "fine\n"
    assert [block.line for block in outcome.result.blocks] == [line_of(path, "fine"), line]


def test_terminating_a_worker_ends_only_it_and_sigterm_to_the_runner_ends_the_group(tmp_path, run):
    path = tutorial(tmp_path, """
        import multiprocessing, os, signal, time
        context = multiprocessing.get_context("fork")
        codes = set()
        for _ in range(30):  # terminated at once: before the worker could have reset any handler of its own
            worker = context.Process(target=time.sleep, args=(1000,))
            worker.start()
            worker.terminate()
            worker.join()
            codes.add(worker.exitcode)
        print(codes)
        """, """
        sleeper = context.Process(target=time.sleep, args=(1000,))
        sleeper.start()
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
        """)
    outcome = run(path, timeout=20)
    line = line_of(path, "sleeper =")
    assert outcome.error == f"beginner_source/demo.py:{line}: ERROR: tutorial died from signal SIGKILL (killed: out of memory?)"
    assert outputs(outcome)[0] == str({-signal.SIGTERM}) + "\n"  # every worker ended by its SIGTERM alone
    assert marked(run.mark) == []


KILL_THE_BUILD = """
from tutorials_site.commands.execute import RunOptions, run_tutorial, sandbox_here
import os, sys
source, rundir, root, workdir, sandboxed = sys.argv[1:]
confined = sandbox_here(root, ()) if sandboxed == "on" else None
run_tutorial(source, rundir, workdir, RunOptions.defaults(root, "beginner/images"), timeout=600, label="x",
             confined=confined, env=os.environ)
"""


# Processes that leave the tutorial's group and tree: in a sandbox, the end of the build ends them too (its PID
# namespace ends); without one (SANDBOX=off), only those that stay in the runner's process group.
ESCAPING = """
subprocess.Popen(sleep, start_new_session=True)
if os.fork() == 0:  # a daemon: fork, setsid, fork, exec
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, sleep)
    os._exit(0)
os.wait()
"""


@pytest.mark.parametrize("sandboxed, started", [("on", 3), ("off", 1)])
def test_killing_the_build_kills_the_tutorial_and_every_process_it_started(tmp_path, run, sandboxed, started):
    path = tutorial(tmp_path, "\n".join([
        "import os, subprocess, sys, time",
        "sleep = [sys.executable, '-c', 'import time; time.sleep(1000)']",
        "subprocess.Popen(sleep)", ESCAPING if started == 3 else "",
        "time.sleep(0.5)", "open('ready', 'w').close()", "time.sleep(1000)"]))
    build = subprocess.Popen([sys.executable, "-c", KILL_THE_BUILD, str(path), str(tmp_path / "run"), str(ROOT),
                              str(tmp_path), sandboxed], cwd=ROOT, env=run.env)
    deadline = time.monotonic() + 30
    while not (tmp_path / "ready").exists() and time.monotonic() < deadline:
        assert build.poll() is None
        time.sleep(0.05)
    assert len(marked(run.mark)) >= 2 + started  # the build, the runner, what it started (and bwrap's two)
    build.kill()  # the build dies without a chance to clean up: the runner learns it from the kernel
    build.wait()
    assert live(marked(run.mark)) == []


def test_an_exception_stops_the_tutorial_and_names_its_line(tmp_path, run):
    path = tutorial(tmp_path, """
        def divide(a, b):
            return a / b
        """, """
        print("dividing")
        divide(1, 0)
        """, """
        print("never")
        """)
    outcome = run(path)
    raised, block = line_of(path, "return a / b"), line_of(path, "dividing")
    assert outcome.error == f"beginner_source/demo.py:{raised}: ERROR: tutorial failed: ZeroDivisionError: division by zero"
    assert outcome.result.error == RunError(line=raised, block_line=block, message="ZeroDivisionError: division by zero")
    assert len(outcome.result.blocks) == 2  # the last block did not run
    # What the failed block printed before it raised, then its traceback (sphinx-gallery shows the traceback alone).
    printed, failing = outcome.result.blocks[1].texts
    assert printed == "dividing\n"
    assert failing.startswith("Traceback (most recent call last):\n")
    assert f'File "{path}", line {line_of(path, "divide(1, 0)")}, in <module>' in failing
    assert failing.endswith("ZeroDivisionError: division by zero\n")
    assert "runner.py" not in failing
    assert outcome.result.blocks[1].failed  # the page shows the printed text, then the traceback as one



@pytest.mark.parametrize("code, error", [
    ("sys.exit()", None),
    ("sys.exit(2)", "tutorial failed: SystemExit: 2"),
])
def test_sys_exit_ends_the_tutorial(tmp_path, run, code, error):
    path = tutorial(tmp_path, "import sys", code, 'print("never")')
    outcome = run(path)
    line = line_of(path, code)
    assert outcome.error == (error and f"beginner_source/demo.py:{line}: ERROR: {error}")
    assert outcome.ok == (error is None)
    assert len(outcome.result.blocks) == 2


def test_last_expressions_figures_and_the_main_module(tmp_path, run):
    path = tutorial(tmp_path, """
        import sys
        import matplotlib.pyplot as plt
        print(__name__, __file__, sys.argv)
        print(repr(__doc__))
        """, """
        plt.plot([1, 2, 3])
        1 + 1
        """, """
        plt.subplots()
        plt.figure()
        "two figures"
        """, """
        nothing = None
        nothing
        """)
    outcome = run(path)
    assert outcome.ok, outcome.error
    # A last expression's repr follows what the block printed, as sphinx-gallery shows it; None shows nothing.
    assert outputs(outcome) == [f"__main__ {path} {[str(path)]}\n{HEADER.strip()[3:-3]!r}\n", "\n2", "\n'two figures'", ""]
    images = [list(block.images) for block in outcome.result.blocks]
    figures = [f"beginner/images/sphx_glr_demo_00{n}.png" for n in (1, 2, 3)]
    assert images == [[], figures[:1], figures[1:], []]
    for name in figures:
        assert (tmp_path / "run-demo" / "page" / name).read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "run-demo" / "runner.log").read_text() == ""
    assert outcome.result.gpu_peak_bytes == ()  # no GPU here (where it ran is the build's to say, not the run's)


def test_each_tutorial_starts_from_a_clean_state(tmp_path, run):
    first = tutorial(tmp_path, """
        import os, matplotlib, torch
        torch.set_default_dtype(torch.float64)
        os.chdir("/")
        os.environ["X"] = "1"
        matplotlib.rcParams["lines.linewidth"] = 7
        """, name="first.py")
    second = tutorial(tmp_path, """
        import os, matplotlib, torch
        print(torch.get_default_dtype(), os.getcwd(), os.environ.get("X"), matplotlib.rcParams["lines.linewidth"])
        """, name="second.py")
    assert run(first).ok
    outcome = run(second)
    assert outputs(outcome) == [f"torch.float32 {tmp_path} None 1.5\n"]


def test_the_random_generators_are_seeded(tmp_path, run):
    path = tutorial(tmp_path, """
        import random, numpy, torch
        print(random.random(), numpy.random.rand(), torch.rand(1).item())
        """)
    once, again = run(path, rundir=tmp_path / "once"), run(path, rundir=tmp_path / "again")
    assert outputs(once) == outputs(again)
    assert outputs(once)[0].split()[0] == str(random.Random(0).random())


def test_torch_is_imported_only_by_a_script_that_does(tmp_path, run):
    path = tutorial(tmp_path, 'import json\nimport sys\n\nprint(json.__name__, "torch" in sys.modules)')
    outcome = run(path)
    assert outcome.ok, outcome.error
    assert "".join(outputs(outcome)).strip() == "json False"


def test_torch_is_seeded_when_the_script_imports_it(tmp_path, run):
    path = tutorial(tmp_path, "import torch\n\nprint(torch.rand(1).item())")
    expected = subprocess.run([sys.executable, "-c", "import torch; torch.manual_seed(0); print(torch.rand(1).item())"],
                              capture_output=True, text=True, check=True).stdout.strip()
    outcome = run(path)
    assert outcome.ok, outcome.error
    assert "".join(outputs(outcome)).strip() == expected


def test_peak_memory_counts_the_children(tmp_path, run):
    child = 'subprocess.run([sys.executable, "-c", "import time; data = b\\"x\\" * {}; time.sleep(0.5)"], check=True)'
    small = tutorial(tmp_path, "import subprocess, sys\n" + child.format(0), name="small.py")
    large = tutorial(tmp_path, "import subprocess, sys\n" + child.format(200_000_000), name="large.py")
    small, large = run(small), run(large)
    assert small.ok and large.ok, (small.error, large.error)
    assert small.peak_rss_bytes > 0
    assert large.peak_rss_bytes - small.peak_rss_bytes > 150_000_000
    assert large.seconds > 0.5


def test_the_peak_memory_of_a_fork_tree_counts_each_shared_page_once(tmp_path, run):
    path = tutorial(tmp_path, """
        import os, time
        data = b"x" * 200_000_000  # resident, then shared by every child of the fork
        children = []
        for _ in range(8):
            pid = os.fork()
            if pid == 0:
                time.sleep(1.5)
                os._exit(0)
            children.append(pid)
        for pid in children:
            os.waitpid(pid, 0)
        """)
    outcome = run(path)
    assert outcome.ok, outcome.error
    assert 150_000_000 < outcome.peak_rss_bytes < 600_000_000  # not nine times the shared 200 MB


def test_timeout_for(tmp_path):
    path = tmp_path / "demo.py"
    path.write_text('"""Doc."""\nx = 1  # tutorials-timeout: 5\n')
    assert timeout_for(path, 600) == 600  # not a line of its own
    path.write_text('"""Doc."""\n\n  # tutorials-timeout: 120  \nx = 1\n')
    assert timeout_for(path, 600) == 120
    path.write_text('"""Doc."""\n\n#tutorials-timeout: abc\n')
    with pytest.raises(ValueError, match=f"^{path}:3: tutorials-timeout: 'abc' is not a number of seconds between 0 "
                                         f"and {MAX_TIMEOUT} \\(24 h\\), written like 600 or 90.5$"):
        timeout_for(path, 600)


@pytest.mark.parametrize("returncode, timed_out_after, reason", [
    (-signal.SIGKILL, 2.5, "tutorial timed out after 2.5 s"),  # the limit's kill is not the tutorial's death
    (-signal.SIGSEGV, None, "tutorial died from signal SIGSEGV"),
    (-signal.SIGKILL, None, "tutorial died from signal SIGKILL (killed: out of memory?)"),
    (-(signal.SIGRTMIN + 2), None, f"tutorial died from signal {signal.SIGRTMIN + 2}"),  # a real-time signal: no name
    (3, None, "tutorial exited with status 3 (os._exit, or see runner.log)"),
    (0, None, "tutorial exited with status 0 (os._exit, or see runner.log)"),  # with no result, or a damaged one
])
def test_how_an_unfinished_run_ended_is_said_in_words(returncode, timed_out_after, reason):
    assert unfinished_reason(returncode, timed_out_after) == reason


@pytest.mark.parametrize("value", ["600", "90.5", "0.1", str(MAX_TIMEOUT), " 7 "])
def test_a_time_limit_is_a_plain_number_of_seconds_up_to_the_maximum(value):
    assert parse_timeout(value) == float(value)


@pytest.mark.parametrize("value", ["999999999", str(MAX_TIMEOUT + 1), "1e3", "0", "0.0", "-5", "+5", "inf", "nan",
                                   "1_000", "5s", "", "0x10", "５"])
def test_a_time_limit_beyond_the_maximum_or_not_plainly_written_is_refused(value):
    with pytest.raises(ValueError, match=f"is not a number of seconds between 0 and {MAX_TIMEOUT}"):
        parse_timeout(value)


@pytest.mark.parametrize("value", ["1e3", "999999999", "0"])
def test_tutorial_timeout_and_the_comment_accept_the_same_values(tmp_path, value):
    from tutorials_site.core.errors import UsageError
    from tutorials_site.core.site.settings import from_environment

    path = tmp_path / "demo.py"
    path.write_text(f'"""Doc."""\n# tutorials-timeout: {value}\n')
    with pytest.raises(ValueError, match=f"^beginner_source/demo.py:2: tutorials-timeout: {value!r} is not"):
        timeout_for(path, 600, "beginner_source/demo.py")
    with pytest.raises(UsageError, match=f"^TUTORIAL_TIMEOUT: {value!r} is not a number of seconds"):
        from_environment({"TUTORIAL_TIMEOUT": value, "LANGUAGES": "en"}, ROOT)
    assert from_environment({"TUTORIAL_TIMEOUT": "90.5", "LANGUAGES": "en"}, ROOT).timeout == 90.5


DOCUMENTED = '''"""
Time limits
===========

A tutorial sets its own limit with a line of its own::

    # tutorials-timeout: 999999999
"""

NOTE = """
# tutorials-timeout: 1e3
"""
x = 1  # tutorials-timeout: abc
'''


def test_only_a_comment_alone_on_its_line_sets_the_time_limit(tmp_path):
    path = tmp_path / "demo.py"
    path.write_text(DOCUMENTED)  # in a docstring, in a string literal, after code: none counts
    assert timeout_for(path, 600) == 600
    path.write_text(DOCUMENTED + "\n    # tutorials-timeout: 30\n")
    assert timeout_for(path, 600) == 30
    assert setting_comments(path.read_text(), "timeout") == [(len(DOCUMENTED.splitlines()) + 2, " 30")]


def test_two_time_limit_lines_are_refused_naming_the_second(tmp_path):
    path = tmp_path / "demo.py"
    path.write_text('"""Doc."""\n# tutorials-timeout: 30\nx = 1\n# tutorials-timeout: 60\n')
    with pytest.raises(ValueError, match=f"^{path}:4: a second tutorials-timeout line \\(the first is line 2\\)"):
        timeout_for(path, 600)


def test_a_script_the_tokenizer_cannot_finish_is_searched_up_to_its_error(tmp_path):
    path = tmp_path / "demo.py"
    path.write_text('"""Doc."""\n# tutorials-timeout: 30\nx = (\n')  # the run reports the syntax error
    assert timeout_for(path, 600) == 30


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_processes_printing_at_once_never_mix_within_a_line(tmp_path, run, method):
    path = tutorial(tmp_path, f"""
        import multiprocessing

        def chatter(rank):
            for n in range(3000):
                print(f"rank {{rank}} line {{n}} " + "x" * 40)

        if __name__ == "__main__":
            workers = [multiprocessing.get_context("{method}").Process(target=chatter, args=(r,)) for r in range(2)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
        """)
    outcome = run(path, options=RunOptions.defaults(ROOT, "beginner/images", OutputLimits.of_block_limit(2**20)))
    assert outcome.ok, outcome.error
    lines = outputs(outcome)[0].splitlines()
    assert sorted(lines) == sorted(f"rank {r} line {n} " + "x" * 40 for r in range(2) for n in range(3000))


# --- what the page shows of the output: within limits, tracebacks without the machine's folders ----------

def test_a_flood_of_output_is_bounded_on_disk_in_memory_and_on_the_page(tmp_path, run):
    path = tutorial(tmp_path, """
        import sys
        line = "x" * 99 + "\\n"
        for _ in range(500_000):  # 50 MB, as fast as it can
            sys.stdout.write(line)
        print("the end")
        """, 'print("next block")')
    outcome = run(path)
    limits = OPTIONS.output_limits
    assert outcome.ok, outcome.error
    flood, after = outputs(outcome)
    assert after == "next block\n"
    assert flood.startswith("x" * 99 + "\n") and len(flood) < limits.block + 1000
    assert ("characters of output (TUTORIAL_OUTPUT_LIMIT)]" in flood
            and "more bytes printed and not recorded" in flood)  # both limits say so
    out = tmp_path / "run-demo" / "out"
    assert (out / "0.txt").stat().st_size == limits.recorded_block
    assert (tmp_path / "run-demo" / "result.json").stat().st_size < 3 * limits.block
    assert outcome.peak_rss_bytes < 150 * 2**20  # the 50 MB are never read whole


def test_a_block_that_prints_past_its_limit_then_raises_still_shows_its_whole_traceback(tmp_path, run):
    path = tutorial(tmp_path, """
        for k in range(2000):
            print("line", k, "x" * 40)
        raise RuntimeError("after the flood")
        """)
    outcome = run(path, options=RunOptions.defaults(ROOT, "beginner/images", OutputLimits.of_block_limit(4096)))
    printed, failing = outcome.result.blocks[0].texts
    assert printed.startswith("line 0 ") and "[output truncated: " in printed  # what is left of the limit
    assert failing.startswith("Traceback (most recent call last):\n")  # whole: it took its share first
    assert failing.endswith("RuntimeError: after the flood\n") and "[output truncated" not in failing
    kept = "".join(line for line in printed.splitlines(keepends=True) if not line.startswith("[output truncated: "))
    assert len(kept) + len(failing) <= 4096  # within the block's limit, the markers aside


def test_tick_is_given_the_live_progress_of_the_run(tmp_path, run):
    path = tutorial(tmp_path, 'print("first")', "import time\ntime.sleep(1.5)")
    seen = []
    outcome = run(path, tick=lambda progress_file: seen.append(read_progress(progress_file)))
    assert outcome.ok, outcome.error
    assert Progress(block=1, line=line_of(path, "import time")) in seen  # the second block, while it ran
    assert seen[0] is None or seen[0].block in (0, 1)  # before the runner wrote one: none


def test_an_html_repr_over_the_limit_is_shown_as_its_text_repr_within_the_limit(tmp_path, run):
    path = tutorial(tmp_path, """
        class Table:
            def __init__(self, rows):
                self.rows = rows
            def _repr_html_(self):
                return "<table>" + "<tr><td>cell</td></tr>" * self.rows + "</table>"
            def __repr__(self):
                return "\\n".join(f"row {k}" for k in range(self.rows))
        Table(2)
        """, "Table(10_000)")
    limits = OutputLimits.of_block_limit(4096)
    outcome = run(path, options=RunOptions.defaults(ROOT, "beginner/images", limits))
    assert outcome.ok, outcome.error
    small, large = outcome.result.blocks
    # as HTML, as stock, sanitised by the build (nh3 writes the table's body it implies)
    assert small.html == "<table><tbody><tr><td>cell</td></tr><tr><td>cell</td></tr></tbody></table>"
    assert large.html is None and "[output truncated: " in large.texts[0]
    assert large.texts[0].lstrip("\n").startswith("row 0\nrow 1\n") and len(large.texts[0]) < 4096 + 1000


def test_a_tutorial_printing_until_its_time_limit_fills_neither_disk_nor_page(tmp_path, run):
    path = tutorial(tmp_path, 'print("start")', """
        import json, os, sys, time
        written, largest, saved = 0, 0, time.monotonic()
        while True:
            written += sys.stdout.write("y" * 999 + "\\n")
            if time.monotonic() - saved > 0.1:  # how large its output file is while it writes
                largest = max(largest, os.fstat(1).st_size)
                with open("sizes.part", "w") as sizes:  # whole or not at all: the time limit kills it anywhere
                    json.dump([written, largest], sizes)
                os.replace("sizes.part", "sizes.json")
                saved = time.monotonic()
        """)
    limits = OutputLimits.of_block_limit(4096)
    outcome = run(path, timeout=3, options=RunOptions.defaults(ROOT, "beginner/images", limits))
    assert outcome.error == f"beginner_source/demo.py:{line_of(path, 'import json')}: ERROR: tutorial timed out after 3 s"
    start, endless = outputs(outcome)
    assert start == "start\n"
    assert endless.startswith("y" * 999 + "\n") and len(endless) < 4096 + 1000
    assert "more bytes printed and not recorded" in endless
    assert (tmp_path / "run-demo" / "out" / "1.txt").stat().st_size == limits.recorded_block
    # While it ran, the file was cut back at intervals: it held the limit and what came since the last cut.
    written, largest = json.loads((tmp_path / "sizes.json").read_text())
    assert largest < written / 4, (written, largest)


def test_a_traceback_shows_the_project_s_files_relative_to_it_and_no_machine_folder(tmp_path, run):
    project = tmp_path / "project"
    (project / "beginner_source").mkdir(parents=True)
    path = tutorial(project / "beginner_source", """
        import json
        import psutil
        try:
            json.loads("{")
        except ValueError:
            try:
                psutil.Process(-1)
            except ValueError:
                open(__file__ + ".missing")
        """)
    outcome = run(path, options=RunOptions.defaults(project, "beginner/images"))
    [failing] = outputs(outcome)
    line = line_of(path, "open(")
    assert f'  File "beginner_source/demo.py", line {line}, in <module>\n' in failing
    assert re.search(r'  File "\.\.\./python3\.\d+/json/decoder\.py", line \d+, in raw_decode\n', failing)
    assert re.search(r'  File "\.\.\./site-packages/psutil/__init__\.py", line \d+, in __init__\n', failing)
    assert failing.endswith("FileNotFoundError: [Errno 2] No such file or directory: "
                            "'beginner_source/demo.py.missing'\n")
    assert outcome.error == (f"beginner_source/demo.py:{line}: ERROR: tutorial failed: FileNotFoundError: [Errno 2] "
                             "No such file or directory: 'beginner_source/demo.py.missing'")
    for folder in {str(tmp_path), sys.prefix, os.path.realpath(sys.prefix), os.path.dirname(os.__file__)}:
        assert folder not in failing
# A process that leaves the tutorial's process group and its tree: `setsid … &` from a shell, and a daemon's
# fork, setsid, fork, exec. Each writes its pid, then the tutorial waits until it runs under its marker.
ESCAPES = {
    "setsid from a shell": """
        import os, sys
        os.system(f"setsid {sys.executable} -c 'import time; time.sleep(600)' {MARKER} > /dev/null 2>&1 &")
        """,
    "double fork": """
        import os, sys
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", MARKER])
            os._exit(0)
        os.wait()
        """,
}
WAIT_FOR_MARKER = """
    import psutil, time
    while not [p for p in psutil.process_iter(["cmdline"]) if MARKER in (p.info["cmdline"] or [])]:
        time.sleep(0.05)
    print("escaped")
    """


def with_marker(mark):
    """The processes whose command line holds MARK."""
    return [p for p in psutil.process_iter(["cmdline"]) if mark in (p.info["cmdline"] or [])]


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "SANDBOX=off"])
@pytest.mark.parametrize("escape", ESCAPES)
def test_a_process_that_leaves_the_group_and_the_tree_ends_with_the_run(tmp_path, run, escape, sandboxed):
    marker = f"escape-{uuid.uuid4().hex}"
    path = tutorial(tmp_path, f"MARKER = {marker!r}", ESCAPES[escape], WAIT_FOR_MARKER)
    try:
        outcome = run(path, confined=SANDBOX if sandboxed else None)
        assert outcome.ok, outcome.error
        assert outputs(outcome)[2] == "escaped\n"
        assert live([p.pid for p in with_marker(marker)]) == []
    finally:
        for process in with_marker(marker):  # a failing test leaves nothing behind either
            process.kill()


# --- The sandbox (core.runs.sandbox): what a tutorial may see, change and signal ---

def test_a_tutorial_changes_nothing_outside_its_folders_and_sees_no_other_run(tmp_path, run):
    home, build = tmp_path / "home", tmp_path / "_build"
    (home / ".ssh").mkdir(parents=True)
    (home / ".gitconfig").write_text("[user]\n")
    (build / "runs" / "other").mkdir(parents=True)
    (build / "src").mkdir()
    workdir = build / "work" / "beginner"
    workdir.mkdir(parents=True)
    packages = sysconfig.get_paths()["purelib"]
    marker = f"zz_sandbox_{uuid.uuid4().hex}"
    targets = {"its working folder": "made", "its temporary folder": "/tmp/made",
               "HOME": "~/.gitconfig", "the build folder": "../../x", "another run": "../../runs/other/result.json",
               "the staged sources": "../../src/x", "the repository": f"{ROOT}/{marker}",
               "site-packages": f"{packages}/{marker}.pth", "/run": "/run/x"}
    path = tutorial(tmp_path, f"""
        import os
        for name, target in {targets!r}.items():
            try:
                with open(os.path.expanduser(target), "a") as file:
                    file.write("planted")
                print(name, "written")
            except OSError as error:
                print(name, error.strerror)
        print(sorted(os.listdir(os.path.expanduser("~"))), sorted(os.listdir("../..")))
        """)
    confined = dataclasses.replace(SANDBOX, home=home, hidden=(build,))
    run.env["HOME"] = str(home)  # the builder's, as the sandbox hides it
    try:
        outcome = run(path, confined=confined, scratch=build / "work", workdir=workdir)
    finally:
        for leaked in (ROOT / marker, Path(packages, f"{marker}.pth")):
            leaked.unlink(missing_ok=True)
    assert outcome.ok, outcome.error
    *written, listed = outputs(outcome)[0].splitlines()
    assert written == ["its working folder written", "its temporary folder written", "HOME written",
                       "the build folder Read-only file system", "another run No such file or directory",
                       "the staged sources No such file or directory", "the repository Read-only file system",
                       "site-packages Read-only file system", "/run Read-only file system"]
    assert listed == "['.gitconfig'] ['work']"  # its own HOME (the one it wrote), the build folder empty
    assert (home / ".gitconfig").read_text() == "[user]\n"
    assert sorted(p.name for p in build.rglob("*")) == ["beginner", "made", "other", "runs", "src", "work"]


def test_a_tutorial_can_neither_stop_nor_kill_the_build_and_its_time_limit_holds(tmp_path, run):
    path = tutorial(tmp_path, """
        import os, signal
        print("parent", os.getppid(), "processes", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
        """, """
        import os, signal, time
        for pid in (os.getppid(), 1):
            for number in (signal.SIGSTOP, signal.SIGKILL):
                try:
                    os.kill(pid, number)
                except OSError as error:
                    print(pid, error.strerror)
        time.sleep(600)
        """)
    started = time.monotonic()
    outcome = run(path, timeout=3)
    assert time.monotonic() - started < 15
    assert outcome.error.endswith("ERROR: tutorial timed out after 3 s")
    # It sees its own processes only: the sandbox's first one (its parent), itself and the output guard.
    assert outputs(outcome)[0].startswith("parent 1 processes [1, 2, 3")


def test_a_storm_of_forks_that_exit_is_cleaned_up_at_once(tmp_path, run):
    path = tutorial(tmp_path, """
        import os
        for _ in range(2000):
            if os.fork() == 0:
                os._exit(0)  # never waited for: a zombie until the run ends
        print("forked")
        """)
    started = time.monotonic()
    outcome = run(path)
    assert outcome.ok, outcome.error
    assert outputs(outcome) == ["forked\n"]
    assert time.monotonic() - started < 30


NETWORK = """
    import socket
    print([name for _, name in socket.if_nameindex()])
    try:
        socket.create_connection(("192.0.2.1", 80), timeout=1)  # TEST-NET-1: reached nowhere, if at all
    except OSError as error:
        print(error.strerror or "timed out")
    """


def test_a_tutorial_has_no_network_unless_it_says_it_needs_it(tmp_path, run):
    names, refused = outputs(run(tutorial(tmp_path, NETWORK)))[0].splitlines()
    assert (names, refused) == ("['lo']", "Network is unreachable")
    shared = outputs(run(tutorial(tmp_path, NETWORK, name="net.py"), network=True))[0].splitlines()[0]
    assert shared == str([name for _, name in socket.if_nameindex()])


def test_a_run_s_folders_are_removed_and_a_save_during_it_changes_nothing_it_runs(tmp_path, run):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    path = tutorial(tmp_path, """
        import os, tempfile, time
        with open(os.path.join(tempfile.gettempdir(), "big"), "wb") as file:
            file.write(bytes(1 << 20))
        open(os.path.expanduser("~/cache"), "w").close()
        first = open(__file__).read()
        open("started", "w").close()
        while open(__file__).read() == first:  # the text it runs stays the one it started with
            time.sleep(0.05)
        """)

    def save_when_started():
        while not (tmp_path / "started").exists():
            time.sleep(0.05)
        path.write_text(path.read_text() + "# saved\n")

    saver = threading.Thread(target=save_when_started)
    saver.start()
    outcome = run(path, timeout=5, scratch=scratch)
    saver.join()
    assert outcome.error.endswith("ERROR: tutorial timed out after 5 s")  # it never saw the save
    assert list(scratch.iterdir()) == []


PLANTED = {
    "an extra file": ("open(os.path.join(output, 'page', 'index.html'), 'w')", "page/index.html"),
    "a link": ("os.symlink('/etc/passwd', os.path.join(output, 'page', 'beginner', 'images', 'sphx_glr_demo_001.png'))",
               "page/beginner/images/sphx_glr_demo_001.png (a link)"),
    "a hard link": ("os.link(os.path.join(output, 'out', '0.txt'), os.path.join(output, 'out', '1.txt'))",
                    "out/1.txt (a file linked from elsewhere too)"),
    "a progress of its own": ("open(os.path.join(output, 'progress.json'), 'w').write('[1]')",
                              "progress.json (not as the runner writes it)"),
    "a dropped.json of its own": ("open(os.path.join(output, 'out', 'dropped.json'), 'w').write('{\"0\": 5}')",
                                  "out/dropped.json (not as the runner writes it)"),
}


@pytest.mark.parametrize("planted", PLANTED)
def test_what_a_run_records_besides_its_record_is_refused(tmp_path, run, planted):
    code, shown = PLANTED[planted]
    path = tutorial(tmp_path, f"""
        import os, sys, time
        output = sys.orig_argv[-1]  # the runner's output folder
        {code}
        time.sleep(600)  # the runner's own progress.json comes with the next block: the run ends here
        """)
    rundir = tmp_path / "run"
    with pytest.raises(OutputRefused) as refused:
        run(path, rundir=rundir, timeout=3)
    assert str(refused.value).startswith(f"beginner_source/demo.py:1: ERROR: its run left {shown} in its output "
                                         "folder, where a run records only out/<k>.txt")
    assert sorted(p.name for p in rundir.iterdir()) == ["options.json", "runner.log"]  # nothing taken


# --- What a run writes is data, and what it can do, whoever builds (root here) ---

FORGED_RECORD = """
    import json, os, sys
    output = sys.orig_argv[-1]
    forged = ".. literalinclude:: /proc/self/environ\\n\\n.. raw:: html\\n   :file: /root/.git-credentials\\n"
    record = {"format": 2, "blocks": [{"line": 7, "texts": [forged], "images": ["../../../etc/passwd"],
              "html": "<script>steal()</script><b>bold</b>"}], "error": None,
              "code_objects": {"../x": [{"name": "y"}]}}
    with open(os.path.join(output, "result.json"), "w") as file:
        json.dump(record, file)
    os._exit(0)
    """


def test_a_tutorial_that_writes_its_own_record_gets_data_shown_as_text_never_markup(tmp_path, run):
    outcome = run(tutorial(tmp_path, FORGED_RECORD))
    assert outcome.ok, outcome.error
    (block,) = outcome.result.blocks
    assert block.texts[0].startswith(".. literalinclude:: /proc/self/environ")  # text, shown in a literal block
    assert block.images == () and block.html == "<b>bold</b>" and outcome.result.code_objects == {}


ATTEMPTS = """
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    print("ptrace", libc.ptrace(16, 1, 0, 0), os.strerror(ctypes.get_errno()))  # PTRACE_ATTACH to the first process
    try:
        with open("big", "wb") as file:
            file.truncate(20 << 30)
    except OSError as error:
        print("sparse", error.strerror)
    links = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            links.add(os.readlink(f"/proc/self/fd/{fd}").split("[")[0])
        except OSError:
            pass  # the listing's own, closed since
    print(sorted(links))
    """


def test_ptrace_holds_no_run_no_file_grows_past_its_limit_and_no_file_of_the_build_is_open(tmp_path, run):
    outcome = run(tutorial(tmp_path, ATTEMPTS), timeout=30)
    assert outcome.ok, outcome.error
    ptrace, sparse, descriptors = outputs(outcome)[0].splitlines()
    assert ptrace == "ptrace -1 Operation not permitted" and sparse == "sparse File too large"
    # Its own output file, /dev/null, pipes (its log, the output guard's), the listing's own: nothing of the build.
    opened = eval(descriptors)  # noqa: S307 (the list the test's own tutorial printed)
    assert all(path in ("/dev/null", "pipe:") or path.startswith("/proc/") or "/out/" in path for path in opened), opened
    assert outcome.seconds < 20  # the run ended with its tutorial, not at its time limit
