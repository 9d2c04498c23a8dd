"""What a tutorial's run may see and change, and how the build checks that it kept to it.

- **Its environment** is built from an allow-list (DEFAULT_ENVIRONMENT, plus the
  names or patterns conf.py lists in `tutorials_environment`), never copied
  from the builder's: a token the build holds does not reach the tutorial.
- **Withheld secrets stay out of the pages.** Without its sandbox
  (SANDBOX=off) a tutorial can still read an ancestor's `/proc/<pid>/environ`
  (same user); in it, a file outside HOME that the builder can read may still
  hold one. A run whose output shows the value of a secret it was not given
  (`withheld`), as it is or in a form a print shows it in (`shown_forms`:
  reversed, base64, hex, URL-encoded), is refused (`leaks`) and its record
  redacted (`redact`). A value shorter than SECRET_MIN_LENGTH is not looked
  for: it would be found where no secret is.

What it may write is the sandbox's to enforce (core.runs.sandbox), not a check after
the run.
"""

import base64
import json
import os
import re
import site
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from urllib.parse import quote, quote_plus

from ..errors import SiteError
from . import run_folder
from .records import RunRecord

# conf.py's list of further variables (names, or fnmatch patterns such as "WANDB_*") tutorials get.
SETTING = "tutorials_environment"
DEFAULT_ENVIRONMENT = (
    # the system: programs, the user, language and time zone, temporary files, native libraries
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "TEMP", "TMP",
    "LD_LIBRARY_PATH", "SOURCE_DATE_EPOCH",
    # Python: the folders on PYTHONPATH (the fingerprint covers what they hold: core.runs.fingerprint), a hash seed
    "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHASHSEED",
    # downloads of datasets and weights behind a proxy or a private certificate authority
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    # caches of downloads and compiled kernels, kept between builds
    "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "MPLCONFIGDIR", "TORCH_HOME",
    "HF_HOME", "HF_HUB_CACHE", "HF_DATASETS_CACHE", "TRANSFORMERS_CACHE",
    "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE",
    # which GPUs, and how CUDA, ROCm, NCCL, torch, inductor and triton use them
    "CUDA_*", "CUDNN_*", "CUBLAS_*", "CUBLASLT_*", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
    "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION", "ROCM_PATH", "HIP_PATH",
    "NCCL_*", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME",
    "TORCH_*", "PYTORCH_*", "TORCHINDUCTOR_*", "TRITON_*", "CC", "CXX",
    # CPU threads
    "OMP_*", "KMP_*", "MKL_*", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
)
# Shorter values would be found in ordinary output by chance.
SECRET_MIN_LENGTH = 8
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASS|KEY|AUTH|CRED|PRIVATE|COOKIE|SESSION|SIGNATURE|DSN", re.IGNORECASE)
RANDOM_VALUE = re.compile(r"(?=.*[A-Za-z])(?=.*\d)\S{16,}")
URL_WITH_CREDENTIALS = re.compile(r"[A-Za-z][\w+.-]*://[^/\s@]+@")
_CREDENTIALS = re.compile(r"[A-Za-z][\w+.-]*://[^/\s@:]*:([^/\s@]+)@")
SHOWN_CHANGES = 8  # files named in a message; the rest are counted


def site_folders() -> list[Path]:
    """The site-packages folders a Python started as this one processes at start-up (their .pth files)."""
    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return [Path(folder) for folder in dict.fromkeys(folders) if Path(folder).is_dir()]


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def allowed(conf: Mapping[str, object]) -> tuple[str, ...]:
    """The names and patterns tutorials get: the defaults and the variables conf.py's `tutorials_environment`
    names, each by its whole name (a pattern, `*` above all, would hand over whatever secret the builder holds)."""
    extra = conf.get(SETTING, ())
    if isinstance(extra, str) or not isinstance(extra, list | tuple) or not all(
            isinstance(name, str) and _NAME.fullmatch(name) for name in extra):
        bad = extra if isinstance(extra, str) or not isinstance(extra, list | tuple) else next(
            name for name in extra if not (isinstance(name, str) and _NAME.fullmatch(name)))
        raise SiteError(f"conf.py: {SETTING}: {bad!r}: must be a list of variable names, each whole "
                        "(\"WANDB_MODE\", \"MY_DATA_DIR\"), never a pattern such as \"*\" or \"MY_*\", which would "
                        "give tutorials the builder's secrets")
    return (*DEFAULT_ENVIRONMENT, *extra)


def tutorial_environment(builder: Mapping[str, str], names: Iterable[str] = DEFAULT_ENVIRONMENT) -> dict[str, str]:
    """The variables of BUILDER whose name matches one of NAMES (fnmatch patterns, case-sensitive), less those a
    pattern matches whose name is a secret's (a variable named whole is given as it is); a proxy's URL without its
    user and password (a tutorial's downloads reach a proxy that asks for none)."""
    names = tuple(names)
    given = {key: value for key, value in builder.items()
             if key in names or (not SECRET_NAME.search(key) and any(fnmatchcase(key, name) for name in names))}
    return {key: without_credentials(value) if key.lower().endswith("_proxy") else value for key, value in given.items()}


def without_credentials(url: str) -> str:
    """URL without the user and password it may hold (`http://user:secret@proxy:3128` -> `http://proxy:3128`)."""
    return re.sub(r"^([A-Za-z][\w+.-]*://)[^/\s@]*@", r"\1", url.strip())


def withheld(builder: Mapping[str, str], given: Mapping[str, str]) -> dict[str, str]:
    """The variables of BUILDER a tutorial was not GIVEN whose value would betray a secret if a page showed it.

    A value counts when a secret's name holds it (`*TOKEN*`, `*PASSWORD*`, `*KEY*`, ...), when it looks
    random (long, letters and digits, no blank: a token under any name) or when it is a URL with credentials.
    Left out, as it would be found by chance where no secret is: short values, values the tutorial was given
    anyway (inside another variable), paths that exist (a traceback shows them), and every other value of
    CI and shell (`GITHUB_SERVER_URL=https://github.com` is in the message torch.hub prints).
    """
    secrets = {}
    for name, value in builder.items():
        if given.get(name) == value or len(value) < SECRET_MIN_LENGTH or any(value in v for v in given.values()):
            continue
        if os.path.isabs(value) and os.path.exists(value):
            continue
        if SECRET_NAME.search(name) or RANDOM_VALUE.fullmatch(value) or URL_WITH_CREDENTIALS.match(value):
            secrets[name] = value
        credentials = _CREDENTIALS.match(value)
        if credentials and len(credentials[1]) >= SECRET_MIN_LENGTH:  # a proxy's password, printed alone
            secrets[f"{name}'s password"] = credentials[1]
    return secrets


def _base64_cores(data: bytes, alphabet: bytes) -> list[str]:
    """What base64 (with ALPHABET's last two characters) of any text holding DATA shows of it, whatever DATA's
    offset in that text: for each of the three offsets, the characters made of DATA's bits alone."""
    cores = []
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data, altchars=alphabet)
        first, end = -(-8 * offset // 6), 8 * (offset + len(data)) // 6
        cores.append(encoded[first:end].decode("ascii"))
    return cores


def shown_forms(value: str) -> dict[str, str]:
    """The forms a print shows a secret's VALUE in (form -> what it is, "" as it is): reversed, base64
    (standard and URL-safe, at any offset in a longer text), hex and URL-encoded; those shorter than
    SECRET_MIN_LENGTH left out, as they would be found where no secret is."""
    data = value.encode()
    forms = [(value, ""), (value[::-1], "reversed"), (data.hex(), "hex"), (data.hex().upper(), "hex"),
             (quote(value, safe=""), "URL-encoded"), (quote_plus(value, safe=""), "URL-encoded")]
    forms += [(core, "base64") for alphabet in (b"+/", b"-_") for core in _base64_cores(data, alphabet)]
    shown: dict[str, str] = {}
    for form, what in forms:
        if len(form) >= SECRET_MIN_LENGTH:
            shown.setdefault(form, what)
    return shown


def _letters(value: str) -> str:
    """VALUE's letters and digits alone, in lower case: what a secret printed spaced out, cut by punctuation or
    in another case still shows."""
    return "".join(char for char in value.lower() if char.isalnum())


def _rot13(value: str) -> str:
    return value.translate(_ROT13)


_ROT13 = str.maketrans("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                       "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM")


def _disguised(value: str, text: str) -> str | None:
    """How TEXT shows VALUE disguised (spaced out or cut by punctuation, in another case, rot13'd, reversed so),
    compared by their letters and digits alone; None where it does not."""
    letters, shown = _letters(value), _letters(text)
    if len(letters) < SECRET_MIN_LENGTH:
        return None
    for form, what in ((letters, "spaced out or in another case"), (_rot13(letters), "rot13"),
                       (letters[::-1], "reversed"), (_rot13(letters)[::-1], "rot13")):
        if form in shown:
            return what
    return None


def leaks(result: RunRecord, secrets: Mapping[str, str]) -> list[tuple[int, str]]:
    """(line of the block, variable name) for each output block of a run's result that shows a secret's value
    in one of its shown_forms, or disguised: the name, then the form in parentheses where it is not the value
    as it is."""
    found = []
    shown = [(block.line, "\n".join((*block.texts, block.html or ""))) for block in result.blocks]
    if result.error:
        shown.append((result.error.line, result.error.message))
    for line, text in shown:
        for name, value in secrets.items():
            what = next((what for form, what in shown_forms(value).items() if form in text), None)
            if what is None:
                what = _disguised(value, text)
            if what is not None:
                found.append((line, f"{name} ({what})" if what else name))
    return found


def redact(run_dir: Path, secrets: Mapping[str, str]) -> None:
    """Replace each secret's value, in each of its shown_forms, in every text the run recorded (result.json,
    output files, log) by its name.

    The figures (page/) are left: a value drawn into pixels cannot be found.
    """
    for path in Path(run_dir).rglob("*"):
        if not path.is_file() or path.is_symlink() or run_folder.PAGE in path.relative_to(run_dir).parts[:1]:
            continue
        data = original = path.read_bytes()
        for name, value in secrets.items():
            marker = f"[{name} withheld]".encode()
            for letters in {_letters(value), _rot13(_letters(value))} if len(_letters(value)) >= SECRET_MIN_LENGTH else ():
                # its letters with anything but letters and digits between them, in any case
                spaced = rb"[^0-9A-Za-z]*".join(re.escape(char.encode()) for char in letters)
                data = re.sub(spaced, marker, data, flags=re.IGNORECASE)
            for shown in shown_forms(value):
                # as written, and as JSON writes it inside a string (result.json, with ensure_ascii)
                for form in {shown.encode(), json.dumps(shown)[1:-1].encode()}:
                    data = data.replace(form, marker)
        if data != original:
            path.write_bytes(data)
