"""The executed Data Parallelism page: its captured output, computed split, figure, provenance."""

import html
import json
import re
from importlib import metadata
from pathlib import Path

import pytest
import sphinx_gallery

from conftest import TUTORIAL_PAGE
from tutorials_site.core.site.checks import output_texts

outputs = output_texts  # the text of every captured-output block, in page order


def model_lines(batch):
    return (
        f"In Model: input size torch.Size([{batch}, 5]) output size torch.Size([{batch}, 2])",
        f"Outside: input size torch.Size([{batch}, 5]) output_size torch.Size([{batch}, 2])",
    )


@pytest.fixture(scope="module")
def page(site):
    return (site / TUTORIAL_PAGE).read_text()


def chunks(batch, gpus):
    """The sizes Tensor.chunk splits a batch into for that many GPUs (DataParallel's scatter): the whole batch
    on the CPU or one GPU."""
    size = -(-batch // max(gpus, 1))
    return [min(size, batch - start) for start in range(0, batch, size)]


def test_training_loop_prints_in_model_and_outside_lines_under_its_cell(page, machine):
    # 100 samples in batches of 30: each GPU's share reaches the model (the whole batch on the CPU or one GPU),
    # the replicas printing in any order, then the loop prints the whole batch.
    loop = next(text for text in outputs(page) if "Outside:" in text and "GPUs ---" not in text)
    steps, step = [], []
    for line in (line.strip() for line in loop.strip().splitlines()):
        step.append(line)
        if line.startswith("Outside:"):
            steps.append((sorted(step[:-1]), line))
            step = []
    gpus = machine.gpus if machine.gpus > 1 else 0  # DataParallel only where there are several
    assert step == [] and steps == [(sorted(model_lines(piece)[0] for piece in chunks(batch, gpus)), model_lines(batch)[1])
                                    for batch in (30, 30, 30, 10)]


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


def test_provenance_line_says_where_and_when_it_ran(page, machine):
    line = html.unescape(re.sub(r"<[^>]+>", "", re.search(r'<div class="tutorial-provenance[^"]*">\s*<p>(.*?)</p>', page, re.S)[1]))
    stamp = json.loads(html.unescape(re.search(r'<meta name="tutorial-execution-stamp" content="([^"]+)"', page)[1]))
    gpus, device, cuda = machine.gpus, machine.device, machine.cuda
    assert (stamp["hardware"]["device"], stamp["hardware"]["gpus"], stamp["hardware"]["cuda"]) == (device, gpus, cuda)
    where = "CPU (no GPU)" if not gpus else f"{device} (1 GPU)" if gpus == 1 else f"{device} ({gpus} GPUs)"
    # It declares two GPUs (`# tutorials-needs: gpus=2`); run on fewer, as a lenient build runs it, the line says so.
    written = " · written for 2 GPUs" if gpus < 2 else ""
    assert stamp["needs_gpus"] == 2 and line.startswith(f"Output captured on {where}{written} · torch ")
    assert f"torch {metadata.version('torch')}" in line
    assert f"commit {stamp['commit']}" in line and re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", line)
    assert (f" · CUDA {cuda} · " in line if cuda else "CUDA" not in line)  # a CPU build of torch has no CUDA version
