"""The tutorial's downloads: every link resolves, and the .py and .ipynb run and print the same lines."""

import html
import os
import re
import subprocess
import sys
import zipfile

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import TUTORIAL_PAGE

EXPECTED = [
    (batch, f"In Model: input size torch.Size([{batch}, 5]) output size torch.Size([{batch}, 2])",
     f"Outside: input size torch.Size([{batch}, 5]) output_size torch.Size([{batch}, 2])")
    for batch in (30, 30, 30, 10)
]


@pytest.fixture(scope="module")
def downloads(site):
    page = site / TUTORIAL_PAGE
    links = re.findall(r'<a class="reference download internal" download="" href="([^"]+)"', page.read_text())
    return {link.rsplit(".", 1)[1]: (page.parent / html.unescape(link)).resolve() for link in links}


def loop_lines(text):
    """The In Model / Outside lines of the training loop (before the simulated multi-GPU section)."""
    text = text.split("--- 2 GPUs ---")[0]
    return [line.strip() for line in text.splitlines() if line.strip().startswith(("In Model:", "Outside:"))]


def expected_lines():
    return [line for _, inner, outer in EXPECTED for line in (inner, outer)]


def test_py_ipynb_and_zip_links_resolve_to_real_files(downloads):
    assert sorted(downloads) == ["ipynb", "py", "zip"]
    for path in downloads.values():
        assert path.is_file() and path.stat().st_size > 0, path
    with zipfile.ZipFile(downloads["zip"]) as archive:
        assert sorted(archive.namelist()) == ["data_parallel_tutorial.ipynb", "data_parallel_tutorial.py"]
        assert archive.read("data_parallel_tutorial.py") == downloads["py"].read_bytes()


def test_downloaded_script_runs_with_python(downloads, tmp_path):
    result = subprocess.run(
        [sys.executable, str(downloads["py"])],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert result.returncode == 0, result.stderr
    assert loop_lines(result.stdout) == expected_lines()


def test_downloaded_notebook_is_valid_and_runs_on_a_jupyter_kernel(downloads, tmp_path):
    notebook = nbformat.read(downloads["ipynb"], as_version=4)
    nbformat.validate(notebook)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(
        output.get("text", "")
        for cell in notebook.cells if cell.cell_type == "code"
        for output in cell.get("outputs", []) if output.output_type == "stream"
    )
    assert loop_lines(printed) == expected_lines()
