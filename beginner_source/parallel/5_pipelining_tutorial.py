"""
Pipeline parallelism: a model cut into stages
=============================================

Cut a model into stages, give each rank its own, and measure the schedule's bubble.

Data parallelism gives every rank the whole model. When the model is too
large for one device, another way is to **cut it into consecutive pieces,
called stages**, and give each rank one stage: the first rank runs the first
layers and sends its activations to the next rank, which runs the next
layers, and so on; the gradients travel back the same way.

Sending a whole batch through would leave every rank but one idle at any
moment. :mod:`torch.distributed.pipelining` cuts the batch into
**micro-batches** instead, so that while the second stage works on the first
micro-batch, the first stage can already start the second one. The order in
which each rank runs the forward and backward passes of the micro-batches is
called the **schedule**.

In this tutorial you will:

- build on each rank only the layers of its own stage, and wrap them in a
  ``PipelineStage``;
- train for one step with three schedules: ``ScheduleGPipe``,
  ``Schedule1F1B`` and ``ScheduleInterleaved1F1B``, which gives each rank two
  stages;
- check that the loss and the gradients equal those of the uncut model;
- record the order in which each rank ran the passes, draw the schedule from
  it, and compute its **bubble**, the share of the time the ranks wait,
  against the formula;
- count how many micro-batches' activations each rank had to keep at once.

Like the :ref:`DDP tutorial <sphx_glr_beginner_ddp_tutorial.py>`, it runs on
any machine: two processes over ``gloo`` without a GPU, one process per GPU
over ``nccl`` with GPUs. The first thing it prints says which.
"""

######################################################################
# Starting the ranks
# ------------------
#
# The start-up code is the DDP tutorial's: ``run_on_ranks(fn)`` starts one
# process per rank, which meet through a ``FileStore`` in a folder of their
# own, each running ``fn`` with ``THREADS`` threads (the cores divided among
# the processes, so that they do not compete for them). ``say`` is its too:
# every rank calls it at the same point, and rank 0 prints every rank's text,
# in rank order, each line tagged with its rank.

# tutorials-needs: gpus=2
import gc
import os
import sys
import tempfile

import matplotlib.pyplot as plt
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B

GPUS = torch.cuda.device_count()
WORLD_SIZE = GPUS if GPUS > 0 else 2
BACKEND = "nccl" if GPUS > 0 else "gloo"
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
THREADS = max(1, CORES // WORLD_SIZE)  # per process: together they use each core once
START_METHOD = "spawn" if hasattr(sys.modules["__main__"], "__file__") else "fork"


def device_for(rank):
    return torch.device(f"cuda:{rank}") if BACKEND == "nccl" else torch.device("cpu")


def rank_main(rank, world_size, store_file, fn, *args):
    """What each process runs: join the group, run ``fn(rank, world_size, *args)``, always leave."""
    torch.set_num_threads(THREADS)
    if BACKEND == "nccl":
        torch.cuda.set_device(rank)
    store = dist.FileStore(store_file, world_size)
    dist.init_process_group(BACKEND, store=store, rank=rank, world_size=world_size)
    try:
        fn(rank, world_size, *args)
        gc.collect()
        dist.barrier()
    finally:
        dist.destroy_process_group()


def run_on_ranks(fn, *args):
    # The ranks meet through a file in a folder made for this call alone: no port to pick, so no other
    # program can take it first.
    with tempfile.TemporaryDirectory() as folder:
        mp.start_processes(rank_main, args=(WORLD_SIZE, os.path.join(folder, "store"), fn, *args),
                           nprocs=WORLD_SIZE, start_method=START_METHOD)


def say(text):
    """Every rank calls this with its own text; rank 0 prints all of them, in rank order, each line tagged."""
    texts = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(text, texts, dst=0)
    if texts is not None:
        for rank, said in enumerate(texts):
            for line in said.splitlines():
                print(f"[rank {rank}] {line}", flush=True)


if __name__ == "__main__":
    where = f"{GPUS} GPUs" if GPUS else f"the CPU ({CORES} cores)"
    print(f"{WORLD_SIZE} processes over {BACKEND} on {where}, {THREADS} thread(s) each")

######################################################################
# The model, built a stage at a time
# ----------------------------------
#
# The model is a stack of ``BLOCKS`` equal blocks (a linear layer and a ReLU)
# followed by a small classifier. The whole point of cutting a model is that
# no rank has room for all of it, so no rank builds it: ``make_layer(i)``
# builds the ``i``-th layer alone, from a seed of its own, and ``stage(s, n)``
# the layers of stage ``s`` of ``n``, each stage the same number of blocks and
# the last one the classifier too. Any process that builds layer ``i`` gets
# the same weights, which is what lets this tutorial's main process build the
# uncut model, once, to check the ranks' results.
#
# ``PipelineStage`` wraps a rank's stage and knows its place in the pipeline
# (its index and the number of stages): it receives its inputs from the
# previous stage and sends its outputs to the next one, and the reverse for
# the gradients.

WIDTH, CLASSES = 1024, 10
BLOCKS = 2 * WORLD_SIZE  # two per rank: one stage of two, or two stages of one
MICROBATCHES = 2 * WORLD_SIZE  # at least one per stage, as Schedule1F1B requires
BATCH = 64 * MICROBATCHES  # micro-batches of equal size: the mean of their losses is the batch's mean loss


def make_layer(index):
    """Layer INDEX of the model: a block, or the classifier after the last block; the same in every process."""
    torch.manual_seed(index)
    if index == BLOCKS:
        return nn.Linear(WIDTH, CLASSES)
    return nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU())


def layers_of(stage_index, stages):
    """The layer numbers of stage STAGE_INDEX of STAGES: its blocks, and the classifier on the last stage."""
    per_stage = BLOCKS // stages
    layers = list(range(stage_index * per_stage, (stage_index + 1) * per_stage))
    return layers + [BLOCKS] if stage_index == stages - 1 else layers


def stage(stage_index, stages, device):
    return nn.Sequential(*(make_layer(i) for i in layers_of(stage_index, stages))).to(device)


def make_batch(device):
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(BATCH, WIDTH, generator=generator)
    targets = torch.randint(0, CLASSES, (BATCH,), generator=generator)
    return inputs.to(device), targets.to(device)


######################################################################
# Recording the order of the passes
# ---------------------------------
#
# To draw a schedule, each rank notes every pass of each of its stages, in
# the order it runs them, with two hooks: a forward pre-hook on the stage's
# module notes a forward pass as it starts, and a hook on the stage's output
# notes the backward pass when the gradient of that output arrives, which is
# when the backward pass of the stage starts. Each stage runs its
# micro-batches in order, forward and backward, so the ``n``-th forward (or
# backward) pass a stage notes is that of micro-batch ``n``.
#
# The times of the passes would say little here: on a machine without a GPU
# the ranks share a few cores with each other and with whatever else runs,
# and the same pass can take many times longer from one moment to the next.
# The order is what the schedule decides, and it is the same on every run.


def record_passes(module, stage_index, passes):
    """Hooks on MODULE that append ("F" or "B", STAGE_INDEX, micro-batch) to PASSES, as each pass starts."""
    counts = {"F": 0, "B": 0}

    def note(kind):
        passes.append((kind, stage_index, counts[kind]))
        counts[kind] += 1

    def forward_ends(module, args, output):
        if output.requires_grad:
            output.register_hook(lambda grad: note("B"))

    module.register_forward_pre_hook(lambda module, args: note("F"))
    module.register_forward_hook(forward_ends)
    return counts


######################################################################
# One step with each schedule
# ---------------------------
#
# ``ScheduleGPipe`` runs the forward passes of all micro-batches, then all
# their backward passes. ``Schedule1F1B`` ("one forward, one backward")
# starts the backward pass of a micro-batch as soon as the last stage has its
# loss, and then alternates: a forward, a backward. Both give each rank one
# stage. ``ScheduleInterleaved1F1B`` cuts the model into twice as many
# stages, each half as long, and gives each rank two of them that are not
# neighbours: rank 0 the first stage and the one just after the last rank's
# first stage, and so on, so that every micro-batch goes round the ranks
# twice. It takes the list of the rank's stages.
#
# The schedule is built with the number of micro-batches and the loss
# function, which only the last stage uses. ``schedule.step`` runs one whole
# training step: it splits the batch into micro-batches along its first
# dimension, runs every pass, exchanging activations and gradients with the
# other ranks, and accumulates the gradients in the stages' parameters,
# divided by the number of micro-batches, so that they are those of the mean
# loss of the batch. Only the rank with the first stage passes the inputs,
# and only the rank with the last stage the targets; it also gets the loss of
# each micro-batch back in ``losses``.
#
# The first step also lets the stages find out the shapes they exchange, so
# each schedule runs twice and the second step is the one recorded. Rank 0
# then gathers every rank's passes, gradients and losses, and writes them to
# a file for this tutorial's main process.

SCHEDULES = {ScheduleGPipe: 1, Schedule1F1B: 1, ScheduleInterleaved1F1B: 2}  # stages per rank


def pipeline_step(rank, world_size, schedule_class):
    """One training step with SCHEDULE_CLASS: this rank's passes, its layers' gradients and the losses."""
    device = device_for(rank)
    per_rank = SCHEDULES[schedule_class]
    stages = world_size * per_rank
    indices = [rank + k * world_size for k in range(per_rank)]  # rank r: stages r, r + world_size, …
    passes, modules, counters = [], [], []
    for index in indices:
        modules.append(stage(index, stages, device))
        counters.append(record_passes(modules[-1], index, passes))
    pipeline = [PipelineStage(module, index, stages, device) for module, index in zip(modules, indices)]
    schedule = schedule_class(pipeline if per_rank > 1 else pipeline[0], n_microbatches=MICROBATCHES,
                              loss_fn=nn.functional.cross_entropy)
    inputs, targets = make_batch(device)
    for _ in ("finding the shapes", "recorded"):
        for module in modules:
            module.zero_grad()
        passes.clear()
        for counts in counters:
            counts.update(F=0, B=0)
        losses = []
        first = (inputs,) if 0 in indices else ()
        last = {"target": targets, "losses": losses} if stages - 1 in indices else {}
        schedule.step(*first, **last)
    gradients = {f"{layer}.{name}": p.grad.cpu() for index, module in zip(indices, modules)
                 for layer, part in zip(layers_of(index, stages), module) for name, p in part.named_parameters()}
    held = sum(p.numel() for module in modules for p in module.parameters())
    with torch.device("meta"):  # the whole model's size, from shapes alone: no memory
        whole = sum(p.numel() for i in range(BLOCKS + 1) for p in make_layer(i).parameters())
    say(f"{schedule_class.__name__}: stages {indices} of {stages}, layers "
        f"{[layers_of(i, stages) for i in indices]}, {held} of the model's {whole} parameters")
    return passes, gradients, [loss.item() for loss in losses]


def all_schedules(rank, world_size, folder):
    for schedule_class in SCHEDULES:
        recorded = pipeline_step(rank, world_size, schedule_class)
        everything = [None] * world_size if rank == 0 else None
        dist.gather_object(recorded, everything, dst=0)
        if rank == 0:
            torch.save(everything, os.path.join(folder, f"{schedule_class.__name__}.pt"))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        run_on_ranks(all_schedules, folder)
        runs = {}  # schedule's name: (stages per rank, what each rank recorded)
        for schedule_class, per_rank in SCHEDULES.items():
            name = schedule_class.__name__
            runs[name] = per_rank, torch.load(os.path.join(folder, f"{name}.pt"), weights_only=True)

######################################################################
# Each rank built only the layers of its stages: its parameters are a
# fraction of the model's, counted from the layers' shapes on the ``meta``
# device, where tensors take no memory.
#
# The same result as the uncut model
# ----------------------------------
#
# This process now builds the uncut model, layer by layer from the same
# seeds, runs it on the whole batch in one piece, and compares: the mean of
# the micro-batch losses with the uncut model's loss, and every layer's
# gradients with those the rank that held it computed. The sums are made in
# another order, so the values agree up to rounding: the comparison allows a
# relative difference of ``1e-5``.

if __name__ == "__main__":
    uncut = nn.Sequential(*(make_layer(i) for i in range(BLOCKS + 1)))
    inputs, targets = make_batch(torch.device("cpu"))
    loss = nn.functional.cross_entropy(uncut(inputs), targets)
    loss.backward()
    expected = {name: p.grad for name, p in uncut.named_parameters()}
    for name, (_, everything) in runs.items():
        gradients = {key: grad for _, grads, _ in everything for key, grad in grads.items()}
        losses = next(losses for _, _, losses in everything if losses)
        same = gradients.keys() == expected.keys() and all(
            torch.allclose(gradients[key], expected[key], rtol=1e-5, atol=1e-7) for key in expected)
        print(f"{name:<24} mean loss of {len(losses)} micro-batches {sum(losses) / len(losses):.6f}, "
              f"uncut {loss.item():.6f}; every gradient equal: {same}")

######################################################################
# Cutting the model and the batch changed where and in which order the work
# was done, not its result.
#
# The schedules, drawn
# --------------------
#
# Each row below is a rank and each box a pass of one micro-batch through
# one of its stages: forward passes light (``F0`` is the forward pass of
# micro-batch 0), backward passes dark (``B0``, its backward pass); in the
# interleaved schedule, a rank's second stage is drawn in green. Each rank's
# passes are in the order it recorded them. To place them in time, each
# pass is given a fixed cost: one unit per block for a forward pass, two for
# a backward pass (it computes the gradients of both the inputs and the
# weights), nothing for the small classifier or the messages. A pass starts
# as soon as its rank is free and the pass it waits for is done: the same
# micro-batch's forward pass on the previous stage, or its backward pass on
# the next one. Where a row has no box, that rank is waiting: these gaps are
# the pipeline's **bubble**.

COLORS = {("F", 0): "#9ecae1", ("B", 0): "#3182bd", ("F", 1): "#a1d99b", ("B", 1): "#31a354"}


def waits_for(kind, stage_index, microbatch, stages):
    if kind == "F":
        return ("F", stage_index - 1, microbatch) if stage_index > 0 else None
    return ("B", stage_index + 1, microbatch) if stage_index < stages - 1 else ("F", stage_index, microbatch)


def place(orders, stages):
    """Each recorded pass of ORDERS (one list per rank) with its rank, start and end, at the fixed costs."""
    blocks = BLOCKS // stages
    cost = {"F": blocks, "B": 2 * blocks}
    placed, free, position = {}, [0] * len(orders), [0] * len(orders)
    while any(at < len(order) for at, order in zip(position, orders)):
        for rank, order in enumerate(orders):
            while position[rank] < len(order):
                done = order[position[rank]]
                before = waits_for(*done, stages)
                if before is not None and before not in placed:
                    break  # its input is not there yet: another rank goes first
                start = max(free[rank], placed[before][2] if before else 0)
                placed[done] = (rank, start, start + cost[done[0]])
                free[rank], position[rank] = start + cost[done[0]], position[rank] + 1
    return placed


def in_flight(order, stages):
    """The most blocks' activations a rank kept at once: its forward passes whose backward pass had not run."""
    blocks, kept, most = BLOCKS // stages, 0, 0
    for kind, _, _ in order:
        kept += blocks if kind == "F" else -blocks
        most = max(most, kept)
    return most


if __name__ == "__main__":
    fig, axes = plt.subplots(len(runs), 1, figsize=(8, 1.0 + 0.9 * WORLD_SIZE * len(runs)), sharex=True,
                             squeeze=False)
    p, m = WORLD_SIZE, MICROBATCHES
    print(f"{'':<24}{'bubble':>8}{'formula':>9}{'activations kept (blocks), per rank':>38}")
    for ax, (name, (per_rank, everything)) in zip(axes[:, 0], runs.items()):
        orders = [passes for passes, _, _ in everything]
        placed = place(orders, p * per_rank)
        span = max(end for _, _, end in placed.values())
        busy = sum(end - start for _, start, end in placed.values())
        bubble = 1 - busy / (p * span)
        formula = (p - 1) / (per_rank * m + p - 1)
        kept = [in_flight(order, p * per_rank) for order in orders]
        print(f"{name:<24}{bubble:>8.1%}{formula:>9.1%}{str(kept):>38}")
        for (kind, stage_index, microbatch), (rank, start, end) in placed.items():
            second = int(stage_index >= p)
            ax.barh(rank, end - start, left=start, color=COLORS[kind, second], edgecolor="white")
            ax.text((start + end) / 2, rank, f"{kind}{microbatch}", ha="center", va="center", fontsize=7,
                    color="black" if kind == "F" else "white")
        ax.set_yticks(range(p), [f"rank {rank}" for rank in range(p)])
        ax.invert_yaxis()
        ax.text(0, 1.03, name, transform=ax.transAxes, fontsize=9)  # not a title: see the DDP tutorial's chart
    axes[-1, 0].set_xlim(0, None)
    axes[-1, 0].set_xlabel("time, in the forward pass of one block")
    fig.tight_layout()

######################################################################
# The table compares the bubble of each drawing (the share of the ranks'
# time without a box) with the formula for ``p`` ranks and ``m``
# micro-batches: ``(p - 1) / (m + p - 1)`` for GPipe and 1F1B, and
# ``(p - 1) / (v·m + p - 1)`` with ``v`` stages per rank for the interleaved
# schedule.
#
# - **GPipe and 1F1B have the same bubble.** The first rank cannot start a
#   backward pass before the last rank has finished its first forward pass,
#   whatever the order: with one stage per rank, 1F1B only moves the backward
#   passes earlier. What it saves is memory: each rank keeps the activations of
#   a forward pass until its backward pass has run, and the last column shows
#   how many blocks' worth each rank kept at once: with GPipe, those of
#   every micro-batch; with 1F1B, those of at most as many micro-batches as
#   there are stages from the rank's own to the last.
# - **More micro-batches** shrink the bubble, as the formula says, but each
#   micro-batch is then smaller and keeps the device less busy.
# - **Interleaving** shrinks the bubble, as if there were ``v`` times more
#   micro-batches: each pass is shorter, so the ranks fill and empty the
#   pipeline sooner. In exchange, every micro-batch crosses from rank to rank
#   ``v`` times as often.
# - **Zero-bubble schedules** (``ScheduleInterleavedZeroBubble``,
#   ``ScheduleZBVZeroBubble``) go further: they split each backward pass in
#   two, the gradients of the inputs, which the previous stage waits for, and
#   those of the weights, which nobody waits for, and fill the bubble with the
#   latter.
#
# What to remember
# ----------------
#
# - A pipeline stage is a consecutive slice of the model on one rank; build
#   only the layers of the rank's stages, and ``PipelineStage`` connects them
#   to the previous and the next stage.
# - A schedule (``ScheduleGPipe``, ``Schedule1F1B``,
#   ``ScheduleInterleaved1F1B`` and others in
#   :mod:`torch.distributed.pipelining`) decides when each micro-batch's
#   forward and backward pass runs on each rank; ``schedule.step`` runs them
#   all and accumulates the gradients.
# - Only the first stage receives the inputs and only the last one the
#   targets and the losses.
# - The result equals that of the uncut model up to rounding; what changes is
#   how long each rank waits (the bubble) and how many activations it keeps.
#
# Where to go next
# ----------------
#
# - `torch.distributed.pipelining reference
#   <https://pytorch.org/docs/stable/distributed.pipelining.html>`_
# - The :ref:`DDP tutorial <sphx_glr_beginner_ddp_tutorial.py>`: pipeline
#   parallelism is often combined with data parallelism, each stage being
#   replicated over several ranks.
