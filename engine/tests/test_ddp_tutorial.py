"""The DistributedDataParallel tutorial: executed at build time (a rank per GPU over nccl, two gloo ranks on a
machine without a GPU), its ranks' output on the page in every language, its notebook runnable on a Jupyter
kernel, and a failing rank failing the build. About the tests' own copy of it (tests/fixtures/site, which the
`site` fixture builds), not whatever the repository ships."""

import html
import re

import nbformat
import psutil
import pytest
from nbclient import NotebookClient

from conftest import build
from tutorials_site.core import languages
from tutorials_site.core.site.checks import output_texts

pytestmark = pytest.mark.site  # every test here builds a site

PAGE = "beginner/ddp_tutorial.html"


outputs = output_texts


@pytest.fixture(scope="module")
def english(site):
    return (site / "en" / PAGE).read_text()


@pytest.fixture(scope="module")
def world(machine):
    """The ranks the tutorial starts on this machine: one per GPU, two on the CPU."""
    return machine.gpus or 2


def test_every_rank_prints_and_they_agree(english, world, machine):
    text = "\n".join(outputs(english))
    total = world * (world + 1) / 2  # the sum of every rank's rank + 1
    for rank in range(world):
        assert f"[rank {rank}] before all_reduce: [{rank + 1.0}, {10.0 * (rank + 1)}]" in text
        assert f"[rank {rank}] after all_reduce:  [{total}, {10.0 * total}]" in text
        assert re.search(rf"^\[rank {rank}\] epoch 1: \d+ batches, last loss \d\.\d{{4}}$", text, re.M)
    checksums = re.findall(r"^\[rank (\d+)\] parameter checksum: (-?\d+\.\d+)$", text, re.M)
    assert sorted(int(rank) for rank, _ in checksums) == list(range(world)) and len({v for _, v in checksums}) == 1
    for block in outputs(english):  # every rank's lines come together, in rank order (`say`)
        ranks = [int(rank) for rank in re.findall(r"^\[rank (\d+)\] ", block, re.M)]
        assert ranks == sorted(ranks), block


def test_the_checkpoint_restores_the_trained_model_on_every_rank(english, world, machine):
    """The model loaded from the checkpoint is the trained one, visibly: its checksum is the trained model's, and
    differs from the new model's before loading."""
    text = "\n".join(outputs(english))
    device = "cuda:{}" if machine.gpus else "cpu"
    number = r"(-?\d+\.\d+)"
    for rank in range(world):
        trained = re.search(rf"^\[rank {rank}\] trained model:\s+checksum {number}(, saved)?$", text, re.M)
        untrained = re.search(rf"^\[rank {rank}\] new model, untrained:\s+checksum {number}$", text, re.M)
        loaded = re.search(rf"^\[rank {rank}\] new model, loaded on {re.escape(device.format(rank))}: checksum {number}$",
                           text, re.M)
        assert trained and untrained and loaded, text
        assert loaded[1] == trained[1] != untrained[1]
        assert bool(trained[2]) is (rank == 0)  # one rank writes the checkpoint


def test_the_measured_comparison_is_a_table_and_a_figure(english, site, world, machine):
    table = next(block for block in outputs(english) if "ms/step" in block)
    row = r"\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d\d)\s+(\d+)$"
    one = re.search(rf"^one process{row}", table, re.M)
    ddp = re.search(rf"^DDP{row}", table, re.M)
    assert one and ddp, table
    assert int(one[1]) == 1 and int(ddp[1]) == world and one[2] == ddp[2]  # the same threads per process
    oversubscribed = re.search(rf"^DDP, default threads{row}", table, re.M)
    assert bool(oversubscribed) is (machine.gpus == 0), table  # only on the CPU
    if oversubscribed:
        assert int(oversubscribed[2]) >= int(ddp[2]) and int(oversubscribed[3]) < int(ddp[3]), table  # fewer steps
    assert ("DataParallel" in table) is (machine.gpus > 1)  # only where more than one GPU is visible
    exchange = table.splitlines()[0]  # printed above the table, by the same cell
    assert re.fullmatch(rf"all_reduce of \d+ gradients: \d+\.\d\d ms, with {ddp[2]} thread\(s\) per process",
                        exchange), exchange
    figure = re.search(r'<img[^>]+src="([^"]*sphx_glr_ddp_tutorial_001\.png)"', english)[1]
    assert (site / "en" / "beginner" / figure).resolve().stat().st_size > 0


def _figure_alt(page):
    image = re.search(r'<img[^>]+sphx_glr_ddp_tutorial_001[^>]*>', page)[0]
    return html.unescape(re.search(r'alt="([^"]*)"', image)[1])


def test_the_figure_has_no_title_drawn_in_english_and_its_alt_text_is_in_every_language(site, english):
    """The chart's alt text is the engine's, for an untitled figure: "Figure 1 of <the page's title>", translated;
    a title drawn by matplotlib would be English in every language, and sphinx-gallery would make it the alt."""
    alts = {}
    for seg in ("en", "ko", "ja", "zh-cn"):
        page = english if seg == "en" else (site / seg / PAGE).read_text()
        title = html.unescape(re.search(r"<h1>([^<]+)", page)[1]).strip()
        alts[seg] = _figure_alt(page)
        assert title in alts[seg] and "1" in alts[seg], (seg, alts[seg])
    assert alts["en"] == "Figure 1 of Getting started with DistributedDataParallel"
    assert len(set(alts.values())) == 4, alts


@pytest.mark.parametrize("lang", languages.TRANSLATED, ids=lambda lang: lang.seg)
def test_every_language_shows_the_same_run(site, english, lang):
    page = (site / lang.seg / PAGE).read_text()
    assert outputs(page) == outputs(english)
    assert "translation-incomplete" not in page  # translated in full


def test_the_tutorials_link_to_each_other(site):
    for seg in ("en", "ko", "ja", "zh-cn"):
        ddp = (site / seg / PAGE).read_text()
        data_parallel = (site / seg / "beginner/data_parallel_tutorial.html").read_text()
        assert 'href="data_parallel_tutorial.html' in ddp and 'href="ddp_tutorial.html' in data_parallel


@pytest.mark.parametrize("seg", ["en", "ko", "ja", "zh-cn"])
def test_the_gallery_shows_both_tutorials_with_their_thumbnails(site, seg):
    index = site / seg / "beginner" / "index.html"
    text = index.read_text()
    for stem in ("data_parallel_tutorial", "ddp_tutorial"):
        assert f'href="{stem}.html' in text
        thumb = re.search(rf'<img[^>]+src="([^"]*sphx_glr_{stem}_thumb\.png)"', text)[1]
        assert (index.parent / thumb).resolve().stat().st_size > 0


def test_the_notebook_runs_every_rank_on_a_jupyter_kernel(english, site, tmp_path, world):
    link = re.search(r'<a class="reference download internal" download="" href="([^"]+\.ipynb)"', english)[1]
    notebook = nbformat.read(site / "en" / "beginner" / html.unescape(link), as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                      for output in cell.get("outputs", []) if output.output_type == "stream")
    total = world * (world + 1) / 2
    for rank in range(world):
        assert f"[rank {rank}] after all_reduce:  [{total}, {10.0 * total}]" in printed, printed
        assert f"[rank {rank}] parameter checksum:" in printed


FAILING_RANK = '''"""
A rank that fails
=================
"""

import torch.distributed as dist
import torch.multiprocessing as mp


def work(rank, world_size, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    try:
        if rank == 1:
            raise RuntimeError("rank 1 cannot go on")
        dist.barrier()
    finally:
        dist.destroy_process_group()


# %%
# Two ranks; one of them raises.

if __name__ == "__main__":
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mp.spawn(work, args=(2, port), nprocs=2)
'''


def test_a_failing_rank_fails_the_build_with_file_and_line_and_leaves_no_process(stubbed_copy):
    (stubbed_copy / "beginner_source" / "rank_failure.py").write_text(FAILING_RANK)
    result = build(stubbed_copy, stubbed_copy / "_build", env={"LANGUAGES": "en", "TUTORIAL_TIMEOUT": "120"})
    output = result.stdout + result.stderr
    line = FAILING_RANK.splitlines().index("    mp.spawn(work, args=(2, port), nprocs=2)") + 1
    assert result.returncode != 0
    assert f"beginner_source/rank_failure.py:{line}: ERROR: tutorial failed: " in output, output
    assert "rank 1 cannot go on" in (stubbed_copy / "_build" / "html" / "en" / "beginner" / "rank_failure.html").read_text()
    left = [p.info for p in psutil.process_iter(["pid", "cwd"]) if p.info["cwd"] and p.info["cwd"].startswith(str(stubbed_copy))]
    assert left == []
