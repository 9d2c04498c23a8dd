"""The executed Data Parallelism page: its captured output, computed split, figure, provenance."""

import html
import json
import re
from importlib import metadata
from pathlib import Path

import pytest
import sphinx_gallery

from conftest import TUTORIAL_PAGE
from tutorials_site.core.checks import output_texts

outputs = output_texts  # the text of every captured-output block, in page order


def model_lines(batch):
    return (
        f"In Model: input size torch.Size([{batch}, 5]) output size torch.Size([{batch}, 2])",
        f"Outside: input size torch.Size([{batch}, 5]) output_size torch.Size([{batch}, 2])",
    )


@pytest.fixture(scope="module")
def page(site):
    return (site / TUTORIAL_PAGE).read_text()


def test_training_loop_prints_in_model_and_outside_lines_under_its_cell(page):
    # On the CPU (and on one GPU) the whole batch reaches the model: 100 samples in batches of 30.
    loop = next(text for text in outputs(page) if "Outside:" in text and "GPUs ---" not in text)
    lines = [line.strip() for line in loop.strip().splitlines()]
    expected = [line for batch in (30, 30, 30, 10) for line in model_lines(batch)]
    assert lines == expected


# The split DataParallel's scatter makes (Tensor.chunk along dim 0), per number of GPUs.
SPLITS = {
    2: {30: [15, 15], 10: [5, 5]},
    3: {30: [10, 10, 10], 10: [4, 4, 2]},
    8: {30: [4, 4, 4, 4, 4, 4, 4, 2], 10: [2, 2, 2, 2, 2]},
}


@pytest.mark.parametrize("gpus", sorted(SPLITS))
def test_computed_split_for_several_gpus(page, gpus):
    text = next(t for t in outputs(page) if "GPUs ---" in t)
    section = text.split(f"--- {gpus} GPUs ---")[1].split("---")[0]
    steps = section.strip().split("Outside:")
    sizes_per_step = [
        [int(n) for n in re.findall(r"In Model: input size torch.Size\(\[(\d+), 5\]\)", step)]
        for step in steps[:-1]
    ]
    split = SPLITS[gpus]
    assert sizes_per_step == [split[30], split[30], split[30], split[10]]
    if len(split[10]) < gpus:
        assert f"({gpus - len(split[10])} of {gpus} GPUs idle for this batch)" in section


def test_figure_is_on_the_page_and_the_gallery_thumbnail(site, page):
    image = re.search(r'<img src="\.\./(_images/sphx_glr_data_parallel_tutorial_001\.png)"', page)
    assert image and (site / "en" / image[1]).stat().st_size > 10_000
    gallery = (site / "en" / "beginner" / "index.html").read_text()
    thumb = re.search(r'<img alt="" src="\.\./(_images/sphx_glr_data_parallel_tutorial_thumb\.png)"', gallery)
    placeholder = Path(sphinx_gallery.__file__).parent / "_static" / "no_image.png"
    assert thumb and (site / "en" / thumb[1]).read_bytes() != placeholder.read_bytes()


def test_provenance_line_says_where_and_when_it_ran(page):
    line = html.unescape(re.sub(r"<[^>]+>", "", re.search(r'<div class="tutorial-provenance[^"]*">\s*<p>(.*?)</p>', page, re.S)[1]))
    stamp = json.loads(html.unescape(re.search(r'<meta name="tutorial-execution-stamp" content="([^"]+)"', page)[1]))
    assert stamp["hardware"]["device"] == "CPU" and stamp["hardware"]["gpus"] == 0  # this machine has no GPU
    assert line.startswith("Output captured on CPU (no GPU)")
    # It declares two GPUs (`# tutorials-needs: gpus=2`) and ran on fewer, as a lenient build runs it: the line says so.
    assert stamp["needs_gpus"] == 2 and line.startswith("Output captured on CPU (no GPU) · written for 2 GPUs · torch")
    assert f"torch {metadata.version('torch')}" in line
    assert f"commit {stamp['commit']}" in line and re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", line)
    assert "CUDA" not in line  # a CPU build of torch has no CUDA version to report
