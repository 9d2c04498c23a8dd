"""The shipped "Parallel and distributed training" track (beginner_source/parallel/): every tutorial in it runs
its CPU path (two gloo ranks; CUDA hidden from it) in a build of a copy of the project, and its page shows
every rank's lines, in rank order, in every language, translated in full. Unlike the other tests, these are
about the shipped tutorials, whatever their number: each one added to the section is tested here too."""

import re

import pytest

from conftest import ROOT, build, site_copy
from tutorials_site.core.site.checks import output_texts

pytestmark = [pytest.mark.site, pytest.mark.tutorial]

SECTION = "beginner_source/parallel"
SHIPPED = sorted((ROOT / SECTION).glob("*.py"))  # the shipped tutorials of the section
LANGS = ("ko", "ja", "zh_CN")
WORLD = 2  # the ranks each tutorial starts on a machine without a GPU


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A copy of the site built in every language, executing the section's tutorials alone, on the CPU."""
    project = site_copy(tmp_path_factory.mktemp("parallel") / "project")
    result = build(project, project / "_build", TUTORIALS=f"{SECTION}/*", CUDA_VISIBLE_DEVICES="")
    assert result.returncode == 0, result.stdout + result.stderr
    return project / "_build" / "html"


def test_the_section_holds_the_track_in_reading_order():
    assert [path.name[:2] for path in SHIPPED] == [f"{n}_" for n in range(1, len(SHIPPED) + 1)]
    assert "1_fsdp2_tutorial.py" in {path.name for path in SHIPPED}


@pytest.mark.parametrize("script", SHIPPED, ids=lambda path: path.stem)
def test_every_rank_prints_in_rank_order_and_every_language_shows_the_run(built, script):
    page = f"beginner/parallel/{script.stem}.html"
    english = (built / "en" / page).read_text()
    assert "Output captured on CPU (no GPU)" in english
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
