"""core.runs.sandbox and execute.sandbox_here: the bubblewrap command line a run gets, and what the build says where
no sandbox can be made. (What a tutorial can and cannot do in it: tests/test_runner.py, tests/test_bad_input.py.)"""

import dataclasses
import os
import subprocess
from pathlib import Path

import pyseccomp
import pytest

from conftest import FIXTURES, tutorials_site
from tutorials_site.commands import execute
from tutorials_site.core.errors import UsageError
from tutorials_site.core.runs import sandbox, seccomp
from tutorials_site.core.site.settings import from_environment


def pairs(argv, option):
    """The (source, destination) of each OPTION (a two-argument one) in ARGV, in order."""
    return [(argv[i + 1], argv[i + 2]) for i, arg in enumerate(argv) if arg == option]


@pytest.fixture
def folders(tmp_path):
    home, build = tmp_path / "home", tmp_path / "home" / "project" / "_build"
    (home / "project" / ".venv").mkdir(parents=True)
    build.mkdir()
    confined = sandbox.Sandbox(program="bwrap", home=home, hidden=(build,),
                               readable=(home / "project" / ".venv", home / "project", Path("/usr"), home / "gone"),
                               devices=(Path("/dev/nvidia0"),))
    run = sandbox.Run(workdir=build / "work" / "gallery", output=build / "work" / "run-1" / "out",
                      tmp=build / "work" / "run-1" / "tmp", home=build / "work" / "run-1" / "home",
                      source=home / "project" / "gallery" / "demo.py", copy=build / "work" / "run-1" / "in" / "demo.py",
                      network=False, nsswitch=build / "work" / "run-1" / "in" / "nsswitch.conf")
    return confined, run


def test_a_run_sees_the_system_read_only_and_its_own_folders_writable_in_this_order(folders):
    confined, run = folders
    argv = sandbox.command(confined, run, ["python", "runner.py"])
    home, build = confined.home, confined.hidden[0]
    assert argv[:3] == ["bwrap", "--ro-bind", "/"] and argv[-3:] == ["--", "python", "runner.py"]
    assert {"--unshare-all", "--die-with-parent", "--new-session"} <= set(argv) and "--share-net" not in argv
    # /tmp and HOME its own, then what it needs of HOME again (outer first, what does not exist left out),
    # then the build folder emptied, the devices, its own folders, the source it runs, and the empty folders
    # made read-only once all is bound inside them.
    assert pairs(argv, "--bind") == [(str(run.tmp), "/tmp"), (str(run.home), str(home)),
                                     (str(run.workdir), str(run.workdir)), (str(run.output), str(run.output))]
    assert pairs(argv, "--ro-bind") == [("/", "/"), (str(home / "project"),) * 2, (str(home / "project/.venv"),) * 2,
                                        (str(run.nsswitch), "/etc/nsswitch.conf"), (str(run.copy), str(run.source))]
    assert pairs(argv, "--dev-bind") == [("/dev/nvidia0", "/dev/nvidia0")]
    order = [argv.index(item) for item in ([str(run.tmp), str(run.home), str(home / "project"), str(build),
                                            str(run.workdir), str(run.copy), "--remount-ro"])]
    assert order == sorted(order)
    assert argv[argv.index(str(build)) - 1] == "--tmpfs"
    assert [argv[i + 1] for i, arg in enumerate(argv) if arg == "--remount-ro"] == ["/run", str(build)]
    assert argv[argv.index("--chdir") + 1] == str(run.workdir)


def test_a_run_that_needs_the_network_shares_the_machine_s(folders):
    confined, run = folders
    argv = sandbox.command(confined, dataclasses.replace(run, network=True), ["true"])
    assert "--share-net" in argv and pairs(argv, "--ro-bind-try")[-1] == ("/run/systemd/resolve",) * 2
    assert (str(run.nsswitch), "/etc/nsswitch.conf") not in pairs(argv, "--ro-bind")  # the machine's own


@pytest.mark.parametrize("system", [
    "passwd: files\nhosts:  files mdns4_minimal [NOTFOUND=return] dns\nnetworks: files\n", "passwd: files\n", ""])
def test_without_the_network_host_names_are_looked_up_in_etc_hosts_alone(system):
    kept = [line for line in system.splitlines() if not line.startswith("hosts:")]
    assert sandbox.offline_nsswitch(system).splitlines() == [*kept, "hosts: files"]


@pytest.mark.parametrize(("value", "sandboxed"), [("", True), ("on", True), (" off ", False)])
def test_sandbox_is_on_or_off(value, sandboxed):
    assert from_environment({"SANDBOX": value}, FIXTURES).sandboxed is sandboxed


def test_any_other_sandbox_value_is_refused():
    with pytest.raises(UsageError, match=r"^SANDBOX: 'no' is not on \(the default"):
        from_environment({"SANDBOX": "no"}, FIXTURES)


def test_without_bwrap_the_build_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    said = execute.sandbox_here(tmp_path, ())
    assert said == ("[execute] cannot sandbox the tutorials: bubblewrap (bwrap) is not installed; install it (Debian "
                    "and Ubuntu: `sudo apt-get install bubblewrap`), or build with SANDBOX=off to run the tutorials "
                    "without a sandbox (they can then write wherever you can; `tutorials-site ci-build` refuses it)")


@pytest.mark.parametrize(("failure", "hint"), [
    ("bwrap: setting up uid map: Permission denied", "kernel.apparmor_restrict_unprivileged_userns=0"),
    ("bwrap: No permissions to create new namespace", "kernel.unprivileged_userns_clone=1"),
    ("bwrap: something else", None),
])
def test_a_bwrap_that_cannot_make_namespaces_is_told_once_with_the_sysctl_to_set(tmp_path, monkeypatch, failure, hint):
    fake = tmp_path / "bwrap"
    fake.write_text(f"#!/bin/sh\necho 'warming up' >&2\necho '{failure}' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    said = execute.sandbox_here(tmp_path, ())
    assert isinstance(said, str) and said.startswith(f"[execute] cannot sandbox the tutorials: {fake} failed: "
                                                     f"{failure}")
    assert (hint in said) if hint else "sysctl" not in said
    assert said.endswith("or build with SANDBOX=off to run the tutorials without a sandbox (they can then write "
                         "wherever you can; `tutorials-site ci-build` refuses it)")


def test_this_machine_makes_a_sandbox_with_what_python_needs_readable():
    found = execute.sandbox_here(Path.cwd(), ())
    assert isinstance(found, sandbox.Sandbox), found  # .ci/sandbox installs bubblewrap where CI runs the tests
    assert Path(execute.sys.prefix) in found.readable and Path.cwd() in found.readable


@pytest.mark.site
def test_make_ci_build_refuses_to_run_the_tutorials_without_their_sandbox(project_copy):
    result = tutorials_site(project_copy, "ci-build", LANGUAGES="en", SANDBOX="off")
    assert result.returncode != 0


    assert not (project_copy / "_build").exists()


def test_a_hidden_folder_inside_another_is_hidden_with_it(folders):
    confined, run = folders
    build = confined.hidden[0]
    argv = sandbox.command(dataclasses.replace(confined, hidden=(build, build.parent, build)), run, ["true"])
    assert [argv[i + 1] for i, arg in enumerate(argv) if arg == "--tmpfs"] == ["/run", str(build.parent)]
    assert [argv[i + 1] for i, arg in enumerate(argv) if arg == "--remount-ro"] == ["/run", str(build.parent)]


# --- The boundary for root and for anyone: what a process in the sandbox cannot do, whoever builds ---

# Each escape a process in the sandbox tries, by a system call's number (this machine's, given by the test), with
# what the kernel answered: "refused" (-1, EPERM) or what it allowed.
ESCAPES = r"""
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
numbers = dict(arg.split("=") for arg in sys.argv[1:])
def answered(result):
    return "refused" if result == -1 and ctypes.get_errno() == errno.EPERM else f"allowed ({result}, {ctypes.get_errno()})"
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
print("uid", os.getuid(), "CapEff", status["CapEff"].strip(), "NoNewPrivs", status["NoNewPrivs"].strip(),
      "Seccomp", status["Seccomp"].strip())
try:
    with open("/proc/sys/kernel/core_pattern", "w") as file:
        file.write("|/bin/true")
    print("core_pattern written")
except OSError as error:
    print("core_pattern", error.strerror)
print("remount rw", answered(libc.mount(None, b"/usr", None, 32 | 4096, None)))  # MS_REMOUNT | MS_BIND, writable
print("unshare user", answered(libc.unshare(0x10000000)))
print("ptrace attach 1", answered(libc.ptrace(16, 1, 0, 0)))
for name in ("keyctl", "bpf", "perf_event_open", "userfaultfd", "kexec_load", "init_module", "setns"):
    print(name, answered(libc.syscall(int(numbers[name]), 0, 0, 0, 0, 0)))
"""
REFUSED = ["core_pattern Read-only file system", "remount rw refused", "unshare user refused", "ptrace attach 1 refused",
           *(f"{name} refused" for name in ("keyctl", "bpf", "perf_event_open", "userfaultfd", "kexec_load",
                                            "init_module", "setns"))]


def _tried_in(confined, tmp_path, as_user=None):
    """What ESCAPES printed in CONFINED's sandbox (with the seccomp filter), bwrap started as AS_USER (uid, gid)."""
    numbers = [f"{name}={pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)}"
               for name in ("keyctl", "bpf", "perf_event_open", "userfaultfd", "kexec_load", "init_module", "setns")]
    fd = os.memfd_create("filter")
    os.write(fd, confined.seccomp)
    os.lseek(fd, 0, os.SEEK_SET)
    user, group = as_user or (None, None)
    try:
        done = subprocess.run(sandbox.probe(confined, ["/usr/bin/python3", "-I", "-c", ESCAPES, *numbers], fd),
                              capture_output=True, text=True, pass_fds=(fd,), user=user, group=group,
                              extra_groups=None if as_user is None else [], cwd=tmp_path)
    finally:
        os.close(fd)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("who", ["root, its own uid kept", "root, as nobody", "an ordinary user"])
def test_each_escape_is_refused_whoever_builds(tmp_path, who):
    if os.geteuid() != 0:
        pytest.skip("the test plays root and an ordinary user: it runs as root (as CI and containers do)")
    home = tmp_path / "home"
    home.mkdir()
    tmp_path.chmod(0o755)
    confined = sandbox.Sandbox(program="bwrap", home=home, hidden=(), readable=(), devices=(),
                               seccomp=seccomp.program(), user=(65534, 65534) if "nobody" in who else None)
    as_user = confined.user or ((1000, 1000) if who == "an ordinary user" else None)
    status, *tried = _tried_in(confined, tmp_path, as_user)
    uid = 0 if who.endswith("kept") else as_user[0]
    assert status == f"uid {uid} CapEff 0000000000000000 NoNewPrivs 1 Seccomp 2"
    assert tried == REFUSED


def test_the_sandbox_drops_every_capability_and_shows_proc_sys_read_only(folders):
    confined, run = folders
    argv = sandbox.command(confined, run, ["true"], seccomp_fd=7)
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert ("/proc/sys", "/proc/sys") in pairs(argv, "--ro-bind-try")
    assert argv[argv.index("--seccomp") + 1] == "7" and argv.index("--seccomp") < argv.index("--")
    assert argv.index("--proc") < argv.index("/proc/sys")  # bound over the run's own /proc


def test_a_root_builder_s_runs_are_run_as_nobody_where_the_machine_allows_and_say_why_not_elsewhere():
    found = execute.sandbox_here(Path.cwd(), ())
    assert isinstance(found, sandbox.Sandbox) and found.seccomp
    if os.geteuid() != 0:
        assert found.user is None and found.fallback == ""
    elif found.user is None:  # this machine: Python under /root, which nobody cannot reach
        assert "Permission denied" in found.fallback or "cannot read" in found.fallback
    else:
        assert found.user[0] != 0 and found.fallback == ""
