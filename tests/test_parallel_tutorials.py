"""The shipped "Parallel and distributed training" track (beginner_source/parallel/): every tutorial in it runs
its CPU path (two gloo ranks; CUDA hidden from it) in a build of a copy of the project, and its page shows
every rank's lines, in rank order, in every language, translated in full. Unlike the other tests, these are
about the shipped tutorials, whatever their number: each one added to the section is tested here too."""

import re

import pytest

from conftest import PARALLEL as SECTION
from conftest import ROOT
from tutorials_site.core.site.checks import output_texts

pytestmark = [pytest.mark.site, pytest.mark.tutorial]

SHIPPED = sorted((ROOT / SECTION).glob("*.py"))  # the shipped tutorials of the section
LANGS = ("ko", "ja", "zh_CN")
WORLD = 2  # the ranks each tutorial starts on a machine without a GPU


@pytest.fixture(scope="module")
def built(parallel_site):
    """The pages of a copy of the site built in every language, the section's tutorials executed on the CPU."""
    return parallel_site / "html"


def test_the_section_holds_the_track_in_reading_order():
    assert [path.name[:2] for path in SHIPPED] == [f"{n}_" for n in range(1, len(SHIPPED) + 1)]
    assert "1_fsdp2_tutorial.py" in {path.name for path in SHIPPED}


@pytest.mark.parametrize("script", SHIPPED, ids=lambda path: path.stem)
def test_every_rank_prints_in_rank_order_and_every_language_shows_the_run(built, script):
    page = f"beginner/parallel/{script.stem}.html"
    english = (built / "en" / page).read_text()
    assert "Output captured on CPU (no GPU)" in english
    # What the introduction points at in every format (page, script, notebook): the first line the ranks' setup prints.
    assert any(re.fullmatch(rf"{WORLD} processes over gloo on the CPU \(\d+ cores\), \d+ thread\(s\) each\n?", block)
               for block in output_texts(english)[:2]), page
    blocks = [block for block in output_texts(english) if "[rank " in block]
    assert blocks, f"{page}: no block shows a rank's line"
    for block in blocks:
        assert all(line.startswith("[rank ") for line in block.splitlines() if line.strip()), block
        ranks = [int(rank) for rank in re.findall(r"^\[rank (\d+)\] ", block, re.M)]
        for said in _rounds(ranks):  # one per `say`: every rank's lines, in rank order, never interleaved
            assert sorted(set(said)) == list(range(WORLD)), block
    for seg in ("ko", "ja", "zh-cn"):
        translated = (built / seg / page).read_text()
        assert output_texts(translated) == output_texts(english)
        assert "translation-incomplete" not in translated, seg


def _rounds(ranks):
    """RANKS (the rank of each line of a block) cut where a rank follows a higher one: a new round of lines."""
    cuts = [0, *(i for i in range(1, len(ranks)) if ranks[i] < ranks[i - 1]), len(ranks)]
    return [ranks[start:end] for start, end in zip(cuts, cuts[1:])]


def test_the_landing_page_and_the_gallery_link_the_track_in_every_language(built):
    for seg in ("en", "ko", "ja", "zh-cn"):
        assert 'href="beginner/parallel/index.html"' in (built / seg / "index.html").read_text(), seg
        section = (built / seg / "beginner" / "parallel" / "index.html").read_text()
        names = [script.stem for script in SHIPPED]
        found = sorted(names, key=lambda name: section.index(f'href="{name}.html'))
        assert found == names, seg  # the cards in reading order


def _said(built, stem):
    """The output blocks of the English page of the section's tutorial STEM, as printed."""
    return output_texts((built / "en" / "beginner" / "parallel" / f"{stem}.html").read_text())


def _mib(text, rank, name):
    """Rank RANK's row NAME of an FSDP2 memory table: held, forward and backward MiB."""
    row = re.search(rf"^\[rank {rank}\] {name}\s+(\S+)\s+(\S+)\s+(\S+)$", text, re.M)
    assert row, text
    return [float(value) for value in row.groups()]


def test_fsdp2_checks_gradients_and_keeps_float32_shards_under_mixed_precision(built):
    text = "\n".join(_said(built, "1_fsdp2_tutorial"))
    for rank in range(WORLD):
        gaps = re.search(rf"^\[rank {rank}\] largest difference from the single-process step, relative: gradients "
                         r"(\S+), parameters after the step (\S+)$", text, re.M)
        assert gaps and float(gaps[1]) < 1e-5 and float(gaps[2]) < 1e-5, text
        assert (f"[rank {rank}] stored shard: torch.float32, its gradient: torch.float32, layer outputs: "
                "torch.bfloat16") in text
        bf16 = re.search(rf"^\[rank {rank}\] largest difference of the gradients from float32's, relative: (\S+)$",
                         text, re.M)
        assert bf16 and float(bf16[1]) > float(gaps[1]), text  # bfloat16's rounding, which float32 shards do not undo


def test_fsdp2_memory_is_measured_per_rank_and_each_choice_shows_in_it(built):
    blocks = _said(built, "2_fsdp2_memory_tutorial")
    meta, order, table = (next(b for b in blocks if key in b) for key in ("MiB allocated by", "per block:", "held"))
    for rank in range(WORLD):
        grown = re.search(rf"^\[rank {rank}\] MiB allocated by: building (\S+), fully_shard \S+, to_empty and "
                          r"reset_parameters (\S+)$", meta, re.M)
        shards = re.search(rf"^\[rank {rank}\] my shards: (\S+) MiB of (\S+) MiB of parameters$", meta, re.M)
        assert grown and shards, meta
        assert float(grown[1]) < 1 and float(grown[2]) < float(shards[2])  # never the whole model
        assert f"[rank {rank}] every rank's shard holds different values: True" in meta
        plain = re.search(rf"^\[rank {rank}\] per block: (.*)$", order, re.M)[1].split(", ")
        early = re.search(rf"^\[rank {rank}\] prefetch:\s+(.*)$", order, re.M)[1].split(", ")
        assert plain[:3] == ["gather", "forward 0", "gather"] and early[:3] == ["gather", "gather", "forward 0"], order
        ddp, one, per_block, no_reshard, prefetch = (_mib(table, rank, name) for name in
                                                     ("DDP", "one unit", "per block", "no reshard", "prefetch"))
        assert per_block[0] < ddp[0] / 2 + 8  # about 1/WORLD of what DDP holds, without its buffers
        assert per_block[1] < one[1] and per_block[1] < no_reshard[1]  # one unit gathers all; no reshard keeps all
        assert per_block[1] <= prefetch[1]  # a block gathered early


def test_tensor_parallel_shows_partial_the_same_input_rule_and_sequence_parallelism(built):
    text = "\n".join(_said(built, "3_tensor_parallel_tutorial"))
    for rank in range(WORLD):
        assert f"[rank {rank}] down's output before its hook: a DTensor, placements (Partial(sum),)" in text
        wrong = re.search(rf"^\[rank {rank}\] with a batch of my own: largest difference from one process (\S+), "
                          r"largest output (\S+)$", text, re.M)
        assert wrong and float(wrong[1]) > 0.1 * float(wrong[2]), text  # no rounding error: a wrong output
        steps = re.search(rf"^\[rank {rank}\] after \d+ AdamW steps, largest difference of the parameters: (\S+)$",
                          text, re.M)
        assert steps and float(steps[1]) < 1e-5, text
        loss = re.search(rf"^\[rank {rank}\] loss (\S+), plain block (\S+)$", text, re.M)
        assert loss and abs(float(loss[1]) - float(loss[2])) < 1e-5, text
        collectives = re.search(rf"^\[rank {rank}\] collectives, forward and backward: (.*)$", text, re.M)[1]
        assert "all_gather_into_tensor" in collectives and "reduce_scatter_tensor" in collectives, collectives
