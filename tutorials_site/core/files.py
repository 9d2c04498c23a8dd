"""Files replaced whole: whoever reads one sees the old contents or the new, never part of either."""

import os
import secrets
from pathlib import Path

# What a writer killed before its rename leaves beside the file (see write_atomically).
LEFTOVERS = ".*.tmp"


def write_atomically(path: Path | str, data: str | bytes, *, durable: bool = False) -> None:
    """Replace the file at `path` (and create its folders) with `data`, text written as UTF-8.

    The data goes to a temporary file beside `path`, which one rename puts in its place: a write that
    fails leaves the old file as it was and removes the temporary. Each write has a temporary of its
    own, so two processes writing one file cannot mix their data. `durable` puts the data on disk
    before the rename, so that not even a crash of the machine can leave an empty file (it costs a
    disk flush: for what is published, not for a build's records).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as f:  # created as any new file is (umask), not private as mkstemp's are
            f.write(data.encode() if isinstance(data, str) else data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
