"""The seccomp filter every sandboxed run gets (bwrap --seccomp): the system calls a tutorial never needs and that
reach past its sandbox, refused with EPERM.

Made with libseccomp (through pyseccomp, ctypes over the system's libseccomp.so.2, which every Debian and Ubuntu
system has: systemd and apt link it) as a BPF program for this machine's architecture; a call of another
architecture's ABI (i386's int 0x80 on x86-64) kills the process. Refused, for the run and every process it starts:

- mounts of any kind (mount, umount2, pivot_root, chroot and the new mount API), and new namespaces (unshare,
  setns, clone with a CLONE_NEW* flag; clone3, whose flags a filter cannot read, answers ENOSYS, so that the C
  library falls back to clone): the read-only views of the sandbox stay as bwrap made them;
- ptrace and process_vm_readv/writev: no process of the run can stop, read or steer another, the sandbox's
  first process included (a run is never held past its end);
- the kernel's key rings (keyctl, add_key, request_key), bpf, perf_event_open, userfaultfd, io_uring: interfaces
  of the kernel a tutorial never needs whose bugs have been ways out of containers;
- kexec, modules, swap, reboot, accounting, quotas, syslog, file handles (open_by_handle_at), I/O ports.
"""

import errno
from collections.abc import Iterable

# Refused with EPERM: by name, as libseccomp knows them (one this architecture lacks is left out).
REFUSED = (
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr", "unshare", "setns",
    "ptrace", "process_vm_readv", "process_vm_writev",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "swapon", "swapoff", "reboot", "acct", "quotactl", "syslog", "open_by_handle_at", "name_to_handle_at",
    "iopl", "ioperm", "uselib", "vhangup", "fanotify_init", "nfsservctl",
)
# clone's flags that make a namespace: CLONE_NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
NAMESPACE_FLAGS = (0x80, 0x20000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)


class SeccompUnavailable(Exception):
    """libseccomp cannot be loaded here: no filter can be made."""


def program(refused: Iterable[str] = REFUSED) -> bytes:
    """The BPF program of the filter, as bwrap's --seccomp reads it. Raises SeccompUnavailable."""
    try:
        import pyseccomp as seccomp  # type: ignore[import-untyped]  # loads libseccomp.so.2 at import
    except (ImportError, RuntimeError, OSError) as error:
        raise SeccompUnavailable(str(error)) from None
    import tempfile

    refuse = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in refused:
        if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) >= 0:
            rules.add_rule(refuse, name)
    for flag in NAMESPACE_FLAGS:
        rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as file:
        rules.export_bpf(file)
        file.seek(0)
        return file.read()
