"""Run-time side of a tutorial's execution, called by sphinx-gallery around each run.

`record_run` is listed in sphinx_gallery_conf["reset_modules"], so it runs in the
very process that executes the tutorial (a parallel worker too). Before the run
it seeds every generator; after a clean run it writes the execution stamp: the
digest of the source that ran, the environment fingerprint, the run time and
the hardware, read from the torch that the tutorial itself used.
"""

import json
import os
import platform
import random
import subprocess
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from ..core.fingerprint import environment_fingerprint, source_digest
from ..core.layout import ROOT
from ..core.stamps import stamp_path

SEED = 0
_started = {}


def record_run(gallery_conf, fname, when):
    if fname is None:  # entering a gallery folder
        return
    target = _target_file(gallery_conf, fname)
    if when == "before":
        stamp_path(target).unlink(missing_ok=True)  # a failed run must leave no stamp
        _seed()
        _started[target] = time.perf_counter()
        return
    seconds = time.perf_counter() - _started.pop(target)
    from sphinx_gallery.gen_rst import md5sum_is_current

    # sphinx-gallery writes the .md5 only after every block ran without error.
    if not md5sum_is_current(target, mode="t"):
        return
    stamp = {"source": source_digest(target), "environment": environment_fingerprint()}
    stamp.update(seconds=round(seconds, 3), **_hardware(), **_origin())
    tmp = stamp_path(target).with_suffix(".tmp")
    tmp.write_text(json.dumps(stamp, indent=1, sort_keys=True))
    os.replace(tmp, stamp_path(target))
    _normalize_zip(target.with_suffix(".zip"))


def _target_file(gallery_conf, fname):
    src_root = Path(gallery_conf["src_dir"])
    for examples, gallery in zip(gallery_conf["examples_dirs"], gallery_conf["gallery_dirs"]):
        if (src_root / examples / fname).exists():
            return src_root / gallery / fname
    raise FileNotFoundError(f"{fname}: not found in any of {gallery_conf['examples_dirs']}")


def _seed():
    import numpy
    import torch

    random.seed(SEED)
    numpy.random.seed(SEED)
    torch.manual_seed(SEED)  # seeds every CUDA device too


def _hardware():
    import torch

    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        device = torch.cuda.get_device_name(0)
    else:
        count, device = 0, "CPU"
    return {
        "device": device,
        "gpus": count,
        "machine": platform.machine(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }


def _origin():
    def git(*args):
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += "+changes"
    return {"commit": commit, "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}


def _normalize_zip(path):
    """Rewrite sphinx-gallery's zip with fixed entry dates, so equal sources give equal bytes."""
    if not path.exists():
        return
    with zipfile.ZipFile(path) as old:
        entries = [(info.filename, old.read(info)) for info in old.infolist()]
    tmp = path.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as new:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            new.writestr(info, data)
    os.replace(tmp, path)
