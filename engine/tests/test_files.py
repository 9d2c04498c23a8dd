"""Files replaced whole (core.files): the one atomic write of records, catalogs, zips and published files."""

import errno
import os
from pathlib import PurePath

import pytest

from tutorials_site.core import files
from tutorials_site.core.files import write_atomically


def test_text_and_bytes_replace_the_file_and_make_its_folders(tmp_path):
    path = tmp_path / "a" / "b" / "record.json"
    write_atomically(path, "première\n")
    assert path.read_bytes() == "première\n".encode()
    write_atomically(path, b"\x00\xff")
    assert path.read_bytes() == b"\x00\xff"
    assert sorted(p.name for p in path.parent.iterdir()) == ["record.json"]  # no temporary left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "versions.json"
    path.write_text("old")
    seen = []

    def disk_full(fd):  # the data is written, not yet on disk: the moment a crash or a full disk strikes
        seen.append((path.read_text(), sorted(p.name for p in tmp_path.iterdir())))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(path, "new", durable=True)
    [(read, names)] = seen
    assert read == "old"  # a reader during the write sees the old file...
    # ... while the new data waits beside it, under a name publish finds a killed writer's leftovers by
    assert len(names) == 2 and names[0].startswith(".versions.json.") and PurePath(names[0]).match(files.LEFTOVERS)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["versions.json"]


def test_each_write_has_a_temporary_of_its_own_created_as_any_file(tmp_path, monkeypatch):
    temporaries = []
    real_replace = os.replace
    monkeypatch.setattr(files.os, "replace", lambda src, dst: (temporaries.append(src), real_replace(src, dst)))
    write_atomically(tmp_path / "x", "1")
    write_atomically(tmp_path / "x", "2")
    assert len(set(temporaries)) == 2 and all(p.match(files.LEFTOVERS) for p in temporaries)
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "x").stat().st_mode & 0o777 == 0o666 & ~umask  # readable as a served file, not private
