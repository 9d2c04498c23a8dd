"""Signed runs: a run CI keeps or a shard hands over is taken only with a valid signature from a trusted build.

A run's stamp seals every other file of it by digest (core.runs.seal); its signature (SIGNATURE, beside the stamp)
is an HMAC-SHA256, keyed with the runs key (TUTORIALS_RUNS_KEY: a repository secret that the workflow gives the
trusted refs' jobs only, pushes to main and v* tags), over the run's key and the stamp's bytes: it covers every
file of the run and the whole stamp (its hardware, commit and date). Whoever can write a kept-runs cache or a
shard's artifact but holds no key (a pull request's workflow, a fork's) can re-seal a run with the engine's own
code, but not sign it.

An HMAC, not GitHub's artifact attestations: runs are checked by the engine itself, on every machine that builds
(a shard, assemble, the next main build reading the cache, `tutorials-site check`), offline and in microseconds, without the
gh CLI, a token or a network call; and caches (actions/cache) cannot be attested at all. What it needs is one
repository secret, given to trusted refs only.

A build with the key signs each run it stamps and takes no run without a valid signature (here, from REUSE, from
a shard; `tutorials-site check` refuses its pages). A build without it (a laptop, a pull request) signs nothing and cannot
verify: a run it copies from elsewhere (REUSE, a shard) is marked UNVERIFIED, its pages say "not verified", and
`tutorials-site ci-build` refuses it.
"""

import hashlib
import hmac
from pathlib import Path

from ..files import read_regular, write_atomically
from .seal import SIGNATURE, STAMP, UNVERIFIED

VARIABLE = "TUTORIALS_RUNS_KEY"  # the environment variable that holds the key
_CONTEXT = b"tutorials-site signed run 1\0"


def signature(key: bytes, run_key: str, stamp: bytes) -> str:
    """The signature of the run RUN_KEY whose stamp.json holds STAMP."""
    return hmac.new(key, _CONTEXT + run_key.encode() + b"\0" + stamp, hashlib.sha256).hexdigest()


def sign(key: bytes, run_dir: Path, run_key: str) -> None:
    """Sign the stamped run RUN_KEY in RUN_DIR with KEY."""
    write_atomically(run_dir / SIGNATURE, signature(key, run_key, read_regular(run_dir / STAMP)) + "\n")


def unsigned(key: bytes, run_dir: Path, run_key: str) -> str | None:
    """Why the run RUN_KEY in RUN_DIR has no valid signature by KEY (None: it has), said in one line."""
    try:
        stamp, signed = read_regular(run_dir / STAMP), read_regular(run_dir / SIGNATURE).decode("ascii", "replace").strip()
    except OSError:
        return "not signed by a trusted build (no signature: a run of a build without the runs key)"
    if not hmac.compare_digest(signed, signature(key, run_key, stamp)):
        return "its signature does not match its stamp (changed, or signed with another key, since it ran)"
    return None


def mark_unverified(run_dir: Path, origin: str) -> None:
    """Mark the run copied into RUN_DIR from ORIGIN as taken without being verified (no key here)."""
    write_atomically(run_dir / UNVERIFIED, f"taken from {origin} without the runs key ({VARIABLE}) to verify it\n")


def verified(run_dir: Path) -> bool:
    """Whether the run in RUN_DIR was not taken unverified (mark_unverified)."""
    return not (run_dir / UNVERIFIED).exists()
