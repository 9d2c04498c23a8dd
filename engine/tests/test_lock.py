"""The torch family's builds in the locks (commands/lock.py, core/runs/torch_builds.py): `tutorials-site lock` and the venv's
install step run offline here, against tiny wheels in folders standing for PyPI and PyTorch's CPU index."""

import hashlib
import json
import os
import subprocess
import sys
import zipfile

import pytest

from conftest import ENGINE
from tutorials_site.commands import lock
from tutorials_site.core.errors import SiteError
from tutorials_site.core.runs import torch_builds
from tutorials_site.core.runs.fingerprint import read_requirements

# PyPI's torch brings its CUDA runtime; the CPU build does not. torchvision pins torch's release, as PyTorch's does.
PYPI = {"torch": ("9.9.0", ["fakedep==1.0", "nvidia-fakecuda==1.0"]), "torchvision": ("0.1.0", ["torch==9.9.0"]),
        "fakedep": ("1.0", []), "nvidia-fakecuda": ("1.0", []), "faketool": ("2.0", ["fakedep"]),
        "fakeapp": ("1.0", ["torchvision"])}
CPU_INDEX = {"torch": ("9.9.0+cpu", ["fakedep==1.0"]), "torchvision": ("0.1.0+cpu", ["torch==9.9.0"])}
REQUIREMENTS = "torch==9.9.0\ntorchvision==0.1.0\n"


def make_wheel(folder, name, version, requires):
    """A wheel pip resolves: its metadata (with REQUIRES) and nothing to install; its sha256 hash."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    files = {f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                 + "".join(f"Requires-Dist: {requirement}\n" for requirement in requires),
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    path = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for member, text in files.items():
            wheel.writestr(member, text)
        wheel.writestr(f"{info}/RECORD", "".join(f"{member},,\n" for member in [*files, f"{info}/RECORD"]))
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def indexes(tmp_path, monkeypatch):
    """{(name, version): hash} of the wheels of a PyPI (a simple index, pip's only index here) and of a CPU
    index with one folder per package (TORCH_CPU_WHEELS: its torch/); pip's configuration and network cut off."""
    hashes = {}
    for name, (version, requires) in PYPI.items():
        hashes[name, version] = make_wheel(tmp_path / "pypi" / name, name, version, requires)
        wheel = next((tmp_path / "pypi" / name).glob("*.whl")).name
        (tmp_path / "pypi" / name / "index.html").write_text(f'<a href="{wheel}">{wheel}</a>\n')
    for name, (version, requires) in CPU_INDEX.items():
        hashes[name, version] = make_wheel(tmp_path / "cpu" / name, name, version, requires)
    for name in [name for name in os.environ if name.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # no configured index, find-links or constraint
    monkeypatch.setenv("PIP_INDEX_URL", (tmp_path / "pypi").as_uri())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # pip's and pip-tools' caches
    monkeypatch.setenv("PIP_TOOLS_CACHE_DIR", str(tmp_path / "cache" / "pip-tools"))
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):  # anything reaching out fails
        monkeypatch.setenv(proxy, "http://127.0.0.1:9")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    return hashes


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "requirements.txt").write_text(REQUIREMENTS)
    (root / "requirements-test.txt").write_text("faketool==2.0\n")
    return root


def locked(root, name):
    return {pinned: (str(line.requirement.specifier), line.hashes) for pinned, line in read_requirements(root / name).items()}


def assert_family_builds(root, hashes):
    cpu, cuda, test = (locked(root, name) for name in (*lock.LOCKS.values(), lock.TEST_LOCK))
    assert cpu == {"torch": ("==9.9.0+cpu", (hashes["torch", "9.9.0+cpu"],)),
                   "torchvision": ("==0.1.0+cpu", (hashes["torchvision", "0.1.0+cpu"],)),
                   "fakedep": ("==1.0", (hashes["fakedep", "1.0"],))}
    assert cuda == {"torch": ("==9.9.0", (hashes["torch", "9.9.0"],)),
                    "torchvision": ("==0.1.0", (hashes["torchvision", "0.1.0"],)),
                    "fakedep": ("==1.0", (hashes["fakedep", "1.0"],)),
                    "nvidia-fakecuda": ("==1.0", (hashes["nvidia-fakecuda", "1.0"],))}
    assert test == {"faketool": ("==2.0", (hashes["faketool", "2.0"],)), "fakedep": cpu["fakedep"]}
    assert "#    tutorials-site lock\n" in (root / lock.LOCKS[None]).read_text()


def test_make_lock_takes_every_family_member_from_torch_s_build(indexes, project, tmp_path):
    # TORCH_CPU_WHEELS as the Makefile's default is written: torch's page; torchvision's is found beside it.
    lock.compile_locks(project, str(tmp_path / "cpu" / "torch") + "/")
    assert_family_builds(project, indexes)


def test_cpu_wheels_that_pip_s_configuration_offers_need_no_torch_cpu_wheels(indexes, project, tmp_path, monkeypatch):
    # As on a machine whose pip configuration has the CPU wheels: no page is added (an empty TORCH_CPU_WHEELS
    # would be an error), and the CUDA lock still gets PyPI's builds.
    monkeypatch.setenv("PIP_FIND_LINKS", f"{tmp_path / 'cpu' / 'torch'} {tmp_path / 'cpu' / 'torchvision'}")
    lock.compile_locks(project, "")
    assert_family_builds(project, indexes)


def test_make_lock_stops_before_resolving_where_a_pinned_member_has_no_cpu_wheel(indexes, project, tmp_path):
    for wheel in (tmp_path / "cpu" / "torchvision").iterdir():
        wheel.unlink()
    with pytest.raises(SiteError) as refused:
        lock.compile_locks(project, str(tmp_path / "cpu" / "torch"))
    assert str(refused.value).startswith("requirements.txt:2: torchvision==0.1.0: pip finds no torchvision==0.1.0+cpu wheel")
    assert not (project / "requirements-cpu.lock").exists()


def test_make_lock_refuses_a_cpu_lock_with_a_member_from_pypi(indexes, project, tmp_path):
    # torchvision comes in as another package's dependency, unpinned: the CPU lock gets PyPI's build.
    (project / "requirements.txt").write_text("torch==9.9.0\nfakeapp==1.0\n")
    with pytest.raises(SiteError) as refused:
        lock.compile_locks(project, str(tmp_path / "cpu" / "torch"))
    line = (project / "requirements-cpu.lock").read_text().splitlines().index("torchvision==0.1.0 \\") + 1
    assert str(refused.value).startswith(f"requirements-cpu.lock:{line}: torchvision==0.1.0 is not a +cpu build")
    assert "requirements-cuda.lock" not in str(refused.value)


def test_the_install_step_finds_every_family_member_s_cpu_wheel(indexes, project, tmp_path):
    # What $(DEPS) runs for TORCH=cpu, as a dry run that reports the files pip would install.
    (project / "requirements-cpu.lock").write_text(
        "".join(f"{name}=={version} --hash={indexes[name, version]}\n"
                for name, version in [("torch", "9.9.0+cpu"), ("torchvision", "0.1.0+cpu"), ("fakedep", "1.0")]))
    report = tmp_path / "report.json"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed", "--report", str(report),
           "--require-hashes", "-r", "requirements-cpu.lock"]
    env = {**os.environ, "TORCH_CPU_WHEELS": str(tmp_path / "cpu" / "torch")}
    # -S: without site-packages, as in the venv's first install: the module needs only Python, and finds no
    # torch of the other build to remove here (the one installed in this environment stays untouched).
    result = subprocess.run([sys.executable, "-S", "-m", "tutorials_site.commands.lock", "install", "requirements-cpu.lock", *pip],
                            cwd=project, env={**env, "PYTHONPATH": str(ENGINE)}, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    chosen = {item["metadata"]["name"]: item["download_info"]["url"] for item in json.loads(report.read_text())["install"]}
    assert chosen == {"torch": (tmp_path / "cpu" / "torch" / "torch-9.9.0+cpu-py3-none-any.whl").as_uri(),
                      "torchvision": (tmp_path / "cpu" / "torchvision" / "torchvision-0.1.0+cpu-py3-none-any.whl").as_uri(),
                      "fakedep": (tmp_path / "pypi" / "fakedep" / "fakedep-1.0-py3-none-any.whl").as_uri()}


# --- path requirements: a package of the project's own, which no hash covers ---

def test_a_path_requirement_is_named_in_the_lock_as_written_and_its_dependencies_stay_hashed(tmp_path):
    (tmp_path / "engine").mkdir()
    (tmp_path / "requirements.txt").write_text("-e ./engine  # the engine, beside the site\ntorch==9.9.0\n")
    paths = lock.path_requirements(tmp_path / "requirements.txt")
    assert paths == {(tmp_path / "engine").resolve(): "-e ./engine"}
    compiled = tmp_path / "requirements-cpu.lock"
    compiled.write_text(
        "#    tutorials-site lock\n#\n# WARNING: pip install will require the following package to be hashed.\n"
        "# Consider using a hashable URL like https://example.org/x.zip\n"
        f"-e {(tmp_path / 'engine').as_uri()}\n    # via -r requirements.txt\n"
        "fakedep==1.0 \\\n    --hash=sha256:aa\n    # via engine\n")
    lock._keep_paths_out(compiled, paths)
    assert compiled.read_text() == (
        "#    tutorials-site lock\n#\n" + lock.PATH_REQUIREMENT + "-e ./engine\n"
        "fakedep==1.0 \\\n    --hash=sha256:aa\n    # via engine\n")
    assert list(read_requirements(compiled)) == ["fakedep"]  # what pip installs with --require-hashes


# --- the rule, and what breaks it ---

def test_a_cpu_lock_with_pypi_s_torchvision_is_refused_at_its_line(tmp_path):
    (tmp_path / "requirements-cpu.lock").write_text(
        "torch==2.13.0+cpu \\\n    --hash=sha256:00\n    # via -r requirements.txt\nTorchVision==0.28.0 \\\n    --hash=sha256:01\n"
        "torchaudio==2.13.0+cpu \\\n    --hash=sha256:02\n")
    assert torch_builds.wrong_builds(tmp_path, "requirements-cpu.lock", "cpu") == [
        "requirements-cpu.lock:4: torchvision==0.28.0 is not a +cpu build, as torch and its family must be there: "
        "pin torchvision with == in requirements.txt, its +cpu wheel reachable (TORCH_CPU_WHEELS), then run `tutorials-site lock`"]
    assert [error.split(":")[1] for error in torch_builds.wrong_builds(tmp_path, "requirements-cpu.lock", None)] == ["1", "6"]


def test_torch_cpu_wheels_names_torch_s_page_or_a_place_for_every_member():
    default = "https://download.pytorch.org/whl/cpu/torch/"  # torch's page of PyTorch's CPU index
    beside = default.removesuffix("torch/") + "torchaudio/"
    assert torch_builds.wheel_pages(default, ["torch", "torchaudio"]) == [default, beside]
    assert torch_builds.wheel_pages("/srv/wheels/torch", ["torchvision"]) == ["/srv/wheels/torchvision/"]
    assert torch_builds.wheel_pages("/opt/wheels", ["torch", "torchvision"]) == ["/opt/wheels"]


def test_the_install_step_removes_members_installed_in_the_other_build():
    pins = [torch_builds.Pin("torch", "2.13.0", 1), torch_builds.Pin("torchvision", "0.28.0", 2),
            torch_builds.Pin("torchaudio", "2.13.0", 3)]
    installed = {"torch": "2.13.0+cpu", "torchvision": "0.28.0", "numpy": "2.4.6"}
    assert torch_builds.other_builds(pins, installed) == ["torch"]
