"""
Pipeline parallelism: a model cut into stages
=============================================

Cut a model into stages, one per rank, and run micro-batches through them.

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

- cut a model into stages, one per rank, with ``PipelineStage``;
- train it for one step with the ``ScheduleGPipe`` schedule and
  ``MICROBATCHES`` micro-batches (four on two ranks);
- check that the loss and the gradients equal those of the uncut model;
- record when each rank ran each micro-batch, draw it as a timeline, and
  compare it with another schedule, ``Schedule1F1B``.

Like the :ref:`DDP tutorial <sphx_glr_beginner_ddp_tutorial.py>`, this page
was run when the site was built: two processes over ``gloo`` on a machine
without a GPU, one process per GPU over ``nccl`` on a GPU machine (one stage
per GPU). The line under this introduction says which.
"""

######################################################################
# Starting the ranks
# ------------------
#
# The ranks are started as in the DDP tutorial: ``run_on_ranks(fn)`` starts
# one process per rank, each of which joins the process group, runs ``fn``
# and leaves the group. What the ranks print goes through ``say``: every rank
# calls it at the same point, and rank 0 prints what each rank said, in rank
# order, each line tagged with the rank that said it.

# tutorials-needs: gpus=2
import gc
import os
import socket
import sys
import time

import matplotlib.pyplot as plt
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

# One process per visible GPU; two processes on the CPU when there is none.
GPUS = torch.cuda.device_count()
WORLD_SIZE = GPUS if GPUS > 0 else 2
BACKEND = "nccl" if GPUS > 0 else "gloo"


def free_port():
    """A TCP port nobody uses right now, for the processes to meet on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def device_for(rank):
    return torch.device(f"cuda:{rank}") if BACKEND == "nccl" else torch.device("cpu")


def rank_main(rank, world_size, port, fn, *args):
    """What each process runs: join the group, run ``fn(rank, world_size, *args)``, always leave."""
    if BACKEND == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(BACKEND, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    try:
        fn(rank, world_size, *args)
        gc.collect()  # what fn left is freed while the group still exists
        dist.barrier()  # no rank leaves while another may still be finishing its last exchange
    finally:
        dist.destroy_process_group()


START_METHOD = "spawn" if hasattr(sys.modules["__main__"], "__file__") else "fork"


def run_on_ranks(fn, *args):
    mp.start_processes(rank_main, args=(WORLD_SIZE, free_port(), fn, *args), nprocs=WORLD_SIZE,
                       start_method=START_METHOD)


def say(text):
    """Every rank calls this with its own text; rank 0 prints all of them, in rank order, each line tagged."""
    texts = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(text, texts, dst=0)
    if texts is not None:
        for rank, said in enumerate(texts):
            for line in said.splitlines():
                print(f"[rank {rank}] {line}", flush=True)


######################################################################
# The model and its stages
# ------------------------
#
# The model is a stack of equal blocks (a linear layer and a ReLU) followed
# by a classifier. Every rank builds the whole model with the same seed, so
# that all of them have the same weights, and keeps only its own slice of
# the blocks: with ``WORLD_SIZE`` ranks, each gets the same number of
# blocks, and the last rank also gets the classifier. In a real model too
# large for one device, each rank would build only its own layers (for
# example on the ``meta`` device first); building everything here lets each
# rank also run the uncut model, for the check below.
#
# ``PipelineStage`` wraps a rank's slice and knows its place in the pipeline
# (its index and the number of stages): it receives its inputs from the
# previous stage and sends its outputs to the next one, and the reverse for
# the gradients.

WIDTH, CLASSES, BLOCKS_PER_STAGE = 1024, 10, 2
MICROBATCHES = max(4, WORLD_SIZE)  # Schedule1F1B needs at least one micro-batch per stage
BATCH = 64 * MICROBATCHES  # micro-batches of equal size: the mean of their losses is the batch's mean loss


def make_model(world_size):
    torch.manual_seed(0)
    blocks = [nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU()) for _ in range(BLOCKS_PER_STAGE * world_size)]
    return nn.Sequential(*blocks, nn.Linear(WIDTH, CLASSES))


def stage_of(model, rank, world_size):
    """The layers of MODEL that rank RANK runs: its share of the blocks, and the classifier on the last rank."""
    start = rank * BLOCKS_PER_STAGE
    end = len(model) if rank == world_size - 1 else start + BLOCKS_PER_STAGE
    return model[start:end]


def make_batch(device):
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(BATCH, WIDTH, generator=generator)
    targets = torch.randint(0, CLASSES, (BATCH,), generator=generator)
    return inputs.to(device), targets.to(device)


######################################################################
# Recording what each rank does, and when
# ---------------------------------------
#
# To draw the timeline, each rank notes when each forward and backward pass
# of its stage starts and ends, with hooks:
#
# - a forward pre-hook and a forward hook on the stage's module run just
#   before and just after its forward pass;
# - the forward hook also puts a hook on the stage's output, which runs when
#   the gradient of that output is known: the backward pass starts;
# - a hook on each parameter runs when that parameter's gradient has been
#   added to ``.grad``: when all of them have run, the backward pass is over.
#
# The times come from ``time.perf_counter``, whose clock all the processes
# of one machine share. On a GPU the hooks first wait for the GPU to finish
# (``torch.cuda.synchronize``), so that a time is when the work was done, not
# when it was queued. The schedule runs the micro-batches in order, so the
# n-th forward (or backward) pass a rank records is that of micro-batch n.


def record_passes(module, device):
    """Hooks on MODULE that append (kind, micro-batch, start, end) to the list returned, for every pass."""
    passes, started, params = [], {}, list(module.parameters())

    def now():
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return time.perf_counter()

    def done(kind):
        number = sum(1 for recorded in passes if recorded[0] == kind)
        passes.append((kind, number, started.pop(kind), now()))

    def backward_starts(grad):
        started["B"], started["gradients"] = now(), 0

    def gradient_added(param):
        started["gradients"] += 1
        if started["gradients"] == len(params):
            done("B")

    def forward_ends(module, args, output):
        done("F")
        if output.requires_grad:
            output.register_hook(backward_starts)

    module.register_forward_pre_hook(lambda module, args: started.update(F=now()))
    module.register_forward_hook(forward_ends)
    for param in params:
        param.register_post_accumulate_grad_hook(gradient_added)
    return passes


######################################################################
# One step through the pipeline
# -----------------------------
#
# The schedule is built from the rank's stage, the number of micro-batches
# and the loss function, which only the last stage uses. ``schedule.step``
# runs one whole training step: it splits the batch into micro-batches
# along its first dimension, runs every micro-batch's forward and backward
# pass, exchanging activations and gradients with the other ranks, and
# accumulates the gradients in the stage's parameters. Only the first rank
# passes the inputs and only the last one the targets; the last rank also
# gets the loss of each micro-batch back in ``losses``.
#
# Each rank then builds the uncut model again (the same seed gives the same
# weights), runs it on the whole batch in one piece, and compares: the last
# rank compares the mean of the micro-batch losses with the uncut model's
# loss, and every rank compares the gradients of its stage's layers with
# those of the same layers of the uncut model. By default the schedule
# divides the accumulated gradients by the number of micro-batches, so they
# are the gradients of the mean loss over the whole batch, as in the uncut
# model. The sums are made in another order, so the values agree up to
# rounding: the comparison allows a relative difference of ``1e-5``.


def pipeline_step(rank, world_size, schedule_class):
    """One training step with SCHEDULE_CLASS; says what it found and returns this rank's recorded passes."""
    device = device_for(rank)
    if device.type == "cpu":  # the ranks share the CPU cores: each takes its share, not all of them
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // world_size))
    layers = stage_of(make_model(world_size).to(device), rank, world_size)
    passes = record_passes(layers, device)
    stage = PipelineStage(layers, rank, world_size, device)
    schedule = schedule_class(stage, n_microbatches=MICROBATCHES, loss_fn=nn.functional.cross_entropy)
    inputs, targets = make_batch(device)
    for _ in ("setting up", "measured"):
        layers.zero_grad()
        passes.clear()
        losses = []
        inputs_here = (inputs,) if rank == 0 else ()
        targets_here = {"target": targets, "losses": losses} if rank == world_size - 1 else {}
        schedule.step(*inputs_here, **targets_here)

    uncut = make_model(world_size).to(device)
    uncut_loss = nn.functional.cross_entropy(uncut(inputs), targets)
    uncut_loss.backward()
    pairs = zip(layers.parameters(), stage_of(uncut, rank, world_size).parameters())
    same = all(torch.allclose(mine.grad, theirs.grad, rtol=1e-5, atol=1e-7) for mine, theirs in pairs)
    text = f"{schedule_class.__name__}: stage {rank} of {world_size}, {len(layers)} layers\n"
    if losses:
        text += (f"mean loss of the {len(losses)} micro-batches: {torch.stack(losses).mean().item():.6f}\n"
                 f"loss of the uncut model:          {uncut_loss.item():.6f}\n")
    say(text + f"gradients of my layers equal the uncut model's: {same}")
    return passes


######################################################################
# Two schedules: GPipe and 1F1B
# -----------------------------
#
# ``ScheduleGPipe`` runs the forward passes of all micro-batches, then all
# their backward passes. Every rank therefore keeps the activations of every
# micro-batch until its backward pass. ``Schedule1F1B`` ("one forward, one
# backward") starts the backward pass of a micro-batch as soon as the last
# stage has its loss, and then alternates: a forward, a backward. A rank
# then holds the activations of at most as many micro-batches as there are
# stages.
#
# The ranks run the same step with each schedule in turn. Rank 0 gathers
# every rank's recorded passes and hands them, through a queue, to this
# tutorial's main process, which draws them below.


def both_schedules(rank, world_size, results):
    for schedule_class in (ScheduleGPipe, Schedule1F1B):
        passes = pipeline_step(rank, world_size, schedule_class)
        timeline = [None] * world_size if rank == 0 else None
        dist.gather_object(passes, timeline, dst=0)
        if rank == 0:
            results.put((schedule_class.__name__, timeline))


if __name__ == "__main__":
    results = mp.get_context(START_METHOD).SimpleQueue()
    run_on_ranks(both_schedules, results)
    timelines = dict(results.get() for _ in range(2))

######################################################################
# With both schedules, the two losses are equal up to rounding, and each
# rank's gradients are those of the uncut model: cutting the model and
# the batch changed where and in which order the work was done, not its
# result.
#
# The timeline
# ------------
#
# Each row below is a rank and each box a pass of one micro-batch through
# that rank's stage: forward passes light (``F0`` is the forward pass of
# micro-batch 0), backward passes dark (``B0``, its backward pass). The times are those of the two runs above,
# measured from the first pass of each run. Where a row has no box, that
# rank was waiting for the other one: these gaps are the **bubble** of the
# pipeline. More micro-batches make the bubble a smaller share of the step,
# but each micro-batch is then smaller and uses the device less well.

COLORS = {"F": "#9ecae1", "B": "#3182bd"}

if __name__ == "__main__":
    fig, axes = plt.subplots(len(timelines), 1, figsize=(7, 1.2 + 1.1 * WORLD_SIZE * len(timelines)),
                             sharex=True, squeeze=False)
    for ax, (name, timeline) in zip(axes[:, 0], timelines.items()):
        origin = min(start for passes in timeline for _, _, start, _ in passes)
        for rank, passes in enumerate(timeline):
            for kind, microbatch, start, end in passes:
                left, width = (start - origin) * 1000, (end - start) * 1000
                ax.barh(rank, width, left=left, color=COLORS[kind], edgecolor="white")
                ax.text(left + width / 2, rank, f"{kind}{microbatch}", ha="center", va="center",
                        color="black" if kind == "F" else "white", fontsize=8)
        ax.set_yticks(range(WORLD_SIZE), [f"rank {rank}" for rank in range(WORLD_SIZE)])
        ax.invert_yaxis()
        ax.set_ylabel(name)
    axes[-1, 0].set_xlabel("milliseconds since the first pass")
    # No title: the text above says what the figure shows, in the reader's language.
    fig.tight_layout()

######################################################################
# In the upper panel (``ScheduleGPipe``), rank 1 starts only once rank 0
# has finished the first micro-batch, and rank 0 waits for the backward
# passes to come back from rank 1. In the lower panel (``Schedule1F1B``),
# the backward passes start earlier, interleaved with the forward passes.
#
# What to remember
# ----------------
#
# - A pipeline stage is a consecutive slice of the model on one rank;
#   ``PipelineStage`` connects it to the previous and the next stage.
# - A schedule (``ScheduleGPipe``, ``Schedule1F1B``, and others in
#   :mod:`torch.distributed.pipelining`) decides when each micro-batch's
#   forward and backward pass runs on each rank; ``schedule.step`` runs them
#   all and accumulates the gradients.
# - Only the first stage receives the inputs and only the last one the
#   targets and the losses.
# - The result equals that of the uncut model up to rounding; what changes
#   is how long each rank waits (the bubble) and how many activations it
#   keeps.
#
# Where to go next
# ----------------
#
# - `torch.distributed.pipelining reference
#   <https://pytorch.org/docs/stable/distributed.pipelining.html>`_
# - The :ref:`DDP tutorial <sphx_glr_beginner_ddp_tutorial.py>`: pipeline
#   parallelism is often combined with data parallelism, each stage being
#   replicated over several ranks.
