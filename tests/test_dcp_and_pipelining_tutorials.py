"""The distributed-checkpoint and pipeline-parallel tutorials of the parallel track, as they ran in this machine's
sandbox: their CPU path on a machine without a GPU (two ranks over gloo, the section build's runs), a rank per GPU
where there are GPUs (a copy run here). What their ranks print, tagged and in rank order, what they
check (a resumed run repeats the losses of one that never stopped; the pipeline's gradients are the uncut model's),
and what they measure (the bubble drawn from the recorded order, against the formula)."""

import re
import shutil

import pytest

from conftest import ROOT
from tutorials_site.commands.execute import RunOptions, run_tutorial, sandbox_here
from tutorials_site.core.runs.records import RunRecord

pytestmark = [pytest.mark.site, pytest.mark.tutorial]

SHIPPED = ROOT / "beginner_source" / "parallel"  # the shipped tutorials, copied: a test never runs them in place


@pytest.fixture(scope="module")
def world(machine):
    """The ranks the tutorials start on this machine: one per GPU, two on the CPU."""
    return machine.gpus or 2


@pytest.fixture(scope="module")
def ran(tmp_path_factory, machine, parallel_site):
    """ran(name) -> (the run's record, its run folder): the shipped tutorial NAME's run. Without a GPU that is its
    CPU path, which the section's build ran already (parallel_site); with GPUs, a copy run here once, a rank per GPU."""
    records = {}

    def ran(name):
        if not (SHIPPED / f"{name}.py").is_file():  # renamed or removed: nothing of the site's left to test
            pytest.skip(f"the site ships no {SHIPPED.name}/{name}.py")
        if name in records:
            return records[name]
        if not machine.gpus:
            run = parallel_site / "runs" / "beginner_source" / "parallel" / name
            record = RunRecord.read(run / "result.json")
            assert record is not None and record.error is None, run
        else:
            folder = tmp_path_factory.mktemp(name)
            source = shutil.copy(SHIPPED / f"{name}.py", folder / f"{name}.py")
            options = RunOptions.defaults(ROOT, "beginner/parallel/images")
            outcome = run_tutorial(source, folder / "run", folder, options, timeout=300,
                                   label=f"beginner_source/parallel/{name}.py", confined=sandbox_here(ROOT, ()))
            assert outcome.ok, outcome.error
            record, run = outcome.result, folder / "run"
        records[name] = record, run
        return records[name]

    return ran


def outputs(record):
    return ["".join(block.texts) for block in record.blocks]


def ranks_in_order(text, world):
    """Every line of TEXT is tagged with a rank, and the ranks come in order, each in one run of lines."""
    tags = [re.match(r"\[rank (\d+)\] ", line) for line in text.splitlines()]
    assert all(tags), text
    order = [int(tag[1]) for tag in tags]
    assert order == sorted(order) and set(order) == set(range(world)), text


def started(text, world):
    """The tutorial's first line: how many ranks, over which backend, with how many threads each."""
    assert re.fullmatch(rf"{world} processes over (gloo on the CPU \(\d+ cores\)|nccl on {world} GPUs), "
                        r"\d+ thread\(s\) each\n?", text), text


def test_dcp_saves_from_every_rank_resumes_resharded_and_loads_for_inference(ran, world):
    start, saved, listing, resumed, alone, partial = [text for text in outputs(ran("4_dcp_tutorial")[0]) if text]
    started(start, world)
    for block in (saved, resumed):
        ranks_in_order(block, world)
    number = r"(\d+\.\d+)"
    after = rf"3: {number}, 4: {number}, 5: {number}"
    uninterrupted = None
    for rank in range(world):
        assert re.search(rf"^\[rank {rank}\]   0\.weight   whole \[32, 16\]\s+here \[\d+, 16\]$", saved, re.M)
        losses = re.search(rf"^\[rank {rank}\] saved after step 2; losses of the steps after it, {after}$", saved, re.M)
        assert losses and uninterrupted in (None, losses.groups()), saved  # every rank saw the same losses
        uninterrupted = losses.groups()
        assert re.search(rf"^\[rank {rank}\]   2\.weight   whole \[4, 32\]\s+here \[4, \d+\]$", resumed, re.M), resumed
        both = re.search(rf"^\[rank {rank}\] model and optimizer: losses {after}; largest difference from the run "
                         rf"that never stopped: (\S+)$", resumed, re.M)
        model = re.search(rf"^\[rank {rank}\] model alone: losses {after}; largest difference from the run that "
                          rf"never stopped: (\S+)$", resumed, re.M)
        assert both and model, resumed
        assert float(both[4]) < 1e-5 < float(model[4])  # resumed exactly with Adam's state, not without
        assert model[1] == uninterrupted[0]  # the same weights: the first step after the checkpoint is the same
    files = re.findall(r"^(\S+)\s+(\d+) bytes$", listing, re.M)
    assert sorted(name for name, _ in files) == sorted([".metadata", *(f"__{rank}_0.distcp" for rank in range(world))])
    assert all(int(size) > 0 for _, size in files)
    inference = re.findall(rf"loss {number}", alone)
    assert len(inference) == 3 and set(inference) == {uninterrupted[0]}, alone
    assert "'model', 'optim'" in alone
    assert partial.splitlines()[0] == ("without allow_partial_load: RuntimeError: Missing key in checkpoint "
                                       "state_dict: app.model.3.weight.")
    assert partial.splitlines()[1] == (f"with allow_partial_load: first layers loaded, loss {uninterrupted[0]}; "
                                       "new layer left as initialized: True")


def test_pipelining_builds_each_stage_alone_matches_the_uncut_model_and_draws_the_schedules(ran, world):
    record, run = ran("5_pipelining_tutorial")
    start, stages, checks, bubbles = [text for text in outputs(record) if text]
    started(start, world)
    lines = stages.splitlines()
    for said in range(0, len(lines), world):  # one `say` per schedule: every rank's line, in rank order
        ranks_in_order("\n".join(lines[said:said + world]), world)
    for schedule in ("ScheduleGPipe", "Schedule1F1B", "ScheduleInterleaved1F1B"):
        for rank in range(world):
            held = re.search(rf"^\[rank {rank}\] {schedule}: stages .* (\d+) of the model's (\d+) parameters$",
                             stages, re.M)
            assert held and int(held[1]) < int(held[2]), stages  # built only its own layers
        check = re.search(rf"^{schedule}\s+mean loss of \d+ micro-batches (\S+), uncut (\S+); every gradient equal: "
                          r"True$", checks, re.M)
        assert check and abs(float(check[1]) - float(check[2])) < 1e-5, checks
    rows = {name: (bubble, formula, kept) for name, bubble, formula, kept in
            re.findall(r"^(\S+)\s+(\d+\.\d)%\s+(\d+\.\d)%\s+(\[[\d, ]+\])$", bubbles, re.M)}
    assert sorted(rows) == ["Schedule1F1B", "ScheduleGPipe", "ScheduleInterleaved1F1B"], bubbles
    microbatches = 2 * world
    for name in ("ScheduleGPipe", "Schedule1F1B"):  # one stage per rank: the formula exactly, drawn from the order
        bubble, formula, _ = rows[name]
        assert bubble == formula == f"{100 * (world - 1) / (microbatches + world - 1):.1f}", bubbles
    assert float(rows["ScheduleInterleaved1F1B"][0]) < float(rows["Schedule1F1B"][0])  # two stages per rank
    blocks_per_stage = 2
    assert rows["ScheduleGPipe"][2] == str([microbatches * blocks_per_stage] * world)  # every micro-batch's
    assert rows["Schedule1F1B"][2] == str([min(microbatches, world - rank) * blocks_per_stage for rank in range(world)])
    (images,) = [list(block.images) for block in record.blocks if block.images]
    assert images == ["beginner/parallel/images/sphx_glr_5_pipelining_tutorial_001.png"]
    assert (run / "page" / images[0]).read_bytes().startswith(b"\x89PNG")
