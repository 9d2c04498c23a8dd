"""
FSDP2 for models larger than one device
=======================================

Build a model without its memory, shard it, then measure what each rank holds.

The :ref:`first FSDP2 tutorial <sphx_glr_beginner_parallel_1_fsdp2_tutorial.py>`
built the whole model on every rank and sharded it afterwards. A model too
large for one device cannot be built that way: every rank would need room for
all of it, if only for a moment. This tutorial builds the model on the
``meta`` device, where tensors have a shape and no memory, shards it there,
and only then gives each rank memory for its own shards. It then looks at
the choices that decide how much memory a rank needs while it trains, and
measures each of them.

In this tutorial you will:

- build a model on the ``meta`` device, shard it, and create only the shards
  with ``to_empty``, then initialize them with ``reset_parameters``;
- wrap the model block by block, and see why one unit for the whole model is
  not enough;
- keep or free the gathered weights between the forward and the backward
  pass (``reshard_after_forward``);
- ask FSDP2 to gather the next block's weights early (prefetching), and see
  the order in which it gathers them;
- measure, on each rank, the memory held between steps and the peak during a
  step, for DDP and for each of these choices.

It starts its processes as the
:ref:`DDP tutorial <sphx_glr_beginner_ddp_tutorial.py>` does, on any machine:
two processes over ``gloo`` without a GPU, one process per GPU over ``nccl``
with GPUs. The first thing it prints says which.
"""

######################################################################
# The processes
# -------------
#
# The start-up code is the DDP tutorial's: ``run_on_ranks(fn)`` starts one
# process per rank, which meet through a ``FileStore`` in a folder of their
# own, each running ``fn`` with ``THREADS`` threads (the cores divided among
# the processes, so that they do not compete for them). ``say`` is its too:
# every rank calls it at the same point, and rank 0 prints every rank's text,
# in rank order, each line tagged with its rank.

# tutorials-needs: gpus=2
import ctypes
import gc
import os
import sys
import tempfile
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.fsdp import fully_shard
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils._python_dispatch import TorchDispatchMode

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
# Measuring memory
# ----------------
#
# On a GPU, PyTorch's allocator counts every byte it hands out:
# ``torch.cuda.memory_allocated`` is what is allocated now and
# ``torch.cuda.max_memory_allocated`` the peak since the last
# ``reset_peak_memory_stats``. A CPU has no such counter in PyTorch. On Linux,
# the C library keeps one for every allocation of the process
# (``mallinfo2``), which includes PyTorch's tensors, and that is what this
# tutorial reads on a CPU; elsewhere it says that it cannot measure.
#
# The peak is what matters, and it is reached in the middle of a step. To
# catch it, ``Watch`` is a ``TorchDispatchMode``: inside ``with Watch(...)``,
# PyTorch calls its ``__torch_dispatch__`` for every operation it runs, and
# ``Watch`` reads the memory after each one and keeps the largest value.
# Collectives are operations too, so ``Watch`` also writes down each
# all-gather and reduce-scatter, in the order they were issued, and its
# ``note`` method adds marks of our own to the same list.
#
# What this measures: on a GPU, the peak of PyTorch's allocations; on a CPU,
# the largest number of bytes the process had allocated after any operation,
# tensors or not (memory allocated and freed inside a single operation is not
# seen). Either way it is measured, not computed from the tensors' sizes.


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                       "fsmblks", "uordblks", "fordblks", "keepcost")]


def c_library_counter():
    """glibc's mallinfo2, where there is one (Linux): the process's allocation statistics."""
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (AttributeError, OSError, TypeError):
        return None
    mallinfo2.restype = MallInfo2
    return mallinfo2


MALLINFO2 = c_library_counter() if sys.platform.startswith("linux") else None


def allocated(device):
    """Bytes this process has allocated now on DEVICE; None where that cannot be measured."""
    if device.type == "cuda":
        return torch.cuda.memory_allocated(device)
    if MALLINFO2 is None:
        return None
    info = MALLINFO2()
    return info.uordblks + info.hblkhd  # in use: in the heap, and in blocks of their own


class Watch(TorchDispatchMode):
    """Inside ``with Watch(device) as watch:``, ``watch.peak`` is the most bytes allocated after any operation,
    and ``watch.log`` the collectives run, in order, with the marks ``watch.note`` added."""

    def __init__(self, device):
        super().__init__()
        self.device, self.log, self.peak = device, [], None

    def __enter__(self):
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        self.peak = allocated(self.device)
        return super().__enter__()

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            self.peak = max(self.peak, torch.cuda.max_memory_allocated(self.device))
        return super().__exit__(*exc)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = func.__name__
        if "allgather" in name or "all_gather_into" in name:
            self.log.append("gather")
        elif "reduce_scatter" in name:
            self.log.append("reduce-scatter")
        now = allocated(self.device)
        if now is not None:
            self.peak = max(self.peak, now)
        return result

    def note(self, mark):
        self.log.append(mark)


def mib(count):
    return "n/a" if count is None else f"{count / 2**20:.1f}"


######################################################################
# The model, built on the ``meta`` device
# ---------------------------------------
#
# The model is a stack of ``BLOCKS`` equal blocks, each a linear layer and a
# ReLU. Built inside ``with torch.device("meta")``, its parameters are
# tensors of the ``meta`` device: they have a shape and a type, and no
# memory at all. ``fully_shard`` needs nothing more: it decides which part
# of each parameter every rank keeps, and replaces each parameter by a
# ``DTensor`` that is still on ``meta``.
#
# Then ``to_empty(device=...)`` gives every parameter memory on the real
# device, with whatever values happen to be there: for a sharded parameter,
# only the rank's shard. The values are set next, by calling each layer's
# ``reset_parameters``, the method its constructor uses to initialize it.
#
# One pitfall: ``reset_parameters`` draws random numbers for each shard. On
# GPUs, DTensor's random operators give each shard its own part of one
# random stream. On a CPU mesh they cannot (DTensor warns so), and every
# rank would draw the same numbers for its shard from the same seed: the
# rows of rank 1 would repeat those of rank 0. So on a CPU each rank seeds
# its generator differently, and the code below checks that the ranks' shards
# differ.
#
# Each rank reports the memory allocated by each stage, measured.

WIDTH, BLOCKS, BATCH = 1024, 8, 64


def make_model():
    return nn.Sequential(*(nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU()) for _ in range(BLOCKS)))


def shard(model, per_block=True, **options):
    """fully_shard on each block (when PER_BLOCK), then on the whole model; OPTIONS go to every call."""
    if per_block:
        for block in model:
            fully_shard(block, **options)
    return fully_shard(model, **options)


def materialize(model, rank, device):
    """Memory for this rank's shards, then their initial values."""
    model.to_empty(device=device)
    torch.manual_seed(0 if device.type == "cuda" else rank)  # see above: on a CPU, a seed of its own per rank
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "DTensor random operators may not have complete support on cpu")
        for module in model.modules():
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()


def build_on_meta(rank, world_size):
    device = device_for(rank)
    gc.collect()
    sizes = [allocated(device)]
    with torch.device("meta"):
        model = make_model()
    sizes.append(allocated(device))
    shard(model)
    sizes.append(allocated(device))
    materialize(model, rank, device)
    sizes.append(allocated(device))
    grown = [None if None in (before, after) else after - before for before, after in zip(sizes, sizes[1:])]
    whole = sum(p.numel() * p.element_size() for p in model.parameters())  # the whole parameters' size
    mine = sum(p.to_local().numel() * p.element_size() for p in model.parameters())
    first = model[0][0].weight.to_local()[0, :3].tolist()
    firsts = [None] * world_size
    dist.all_gather_object(firsts, first)
    say(f"MiB allocated by: building {mib(grown[0])}, fully_shard {mib(grown[1])}, "
        f"to_empty and reset_parameters {mib(grown[2])}\n"
        f"my shards: {mib(mine)} MiB of {mib(whole)} MiB of parameters\n"
        f"first weight, first values of my shard: {[round(value, 4) for value in first]}\n"
        f"every rank's shard holds different values: {all(other != firsts[0] for other in firsts[1:])}")


if __name__ == "__main__":
    run_on_ranks(build_on_meta)

######################################################################
# Building the model allocated next to nothing. ``fully_shard`` allocated a
# little for its own bookkeeping (and, the first time, for the device mesh
# and the process group's buffers), and creating and initializing the shards
# allocated about the size of the rank's own shards: no rank ever held the
# whole model.
#
# Units, resharding and prefetching
# ---------------------------------
#
# Three choices decide how much memory a rank needs while it trains.
#
# **The units.** Each ``fully_shard`` call makes one unit, whose parameters
# are gathered together. ``shard`` calls it on every block, then on the whole
# model: the model's own call takes charge of any parameter that no block
# claimed (here, none). With one unit for the whole model instead
# (``per_block=False``), the forward pass would gather every parameter at
# once, and the rank would hold the whole model during the step after all.
#
# **Resharding after the forward pass.** After a block's forward pass, FSDP2
# frees its gathered weights and gathers them again for the backward pass
# (``reshard_after_forward=True``, the default for every unit but the whole
# model's). With ``False``, a unit keeps its gathered weights from its
# forward pass to its backward pass: one all-gather less per block and per
# step, paid with memory. An integer in between keeps the weights sharded over
# a smaller group of ranks, for example the GPUs of one machine.
#
# **Prefetching.** By default, a block's weights are gathered when the block
# is about to run. ``set_modules_to_forward_prefetch`` and
# ``set_modules_to_backward_prefetch`` tell a unit which units to gather next,
# as soon as its own weights are there. On GPUs, FSDP2 runs its collectives on
# separate CUDA streams, so the next block's all-gather then overlaps the
# current block's computation; the price is a second block's weights in
# memory. (In the backward pass, FSDP2 prefetches one block ahead even
# without being told.)
#
# The code below runs a forward pass of the model wrapped per block, without
# and with prefetching, and lists, in order, the all-gathers it issued and the
# blocks it ran (``gather`` and ``forward 0``, ``forward 1``, …). The section
# after it measures the memory of every choice.

CHOICES = {
    "one unit": dict(per_block=False),
    "per block": dict(),
    "no reshard": dict(reshard_after_forward=False),
    "prefetch": dict(prefetch=True),
}


def build(rank, device, per_block=True, reshard_after_forward=True, prefetch=False):
    with torch.device("meta"):
        model = make_model()
    shard(model, per_block, reshard_after_forward=reshard_after_forward)
    if prefetch:
        for block, after in zip(model, model[1:]):
            block.set_modules_to_forward_prefetch([after])
            after.set_modules_to_backward_prefetch([block])
    materialize(model, rank, device)
    return model


def forward_order(rank, world_size):
    device, lines = device_for(rank), []
    for name in ("per block", "prefetch"):
        model = build(rank, device, **CHOICES[name])
        for index, block in enumerate(model):
            block.register_forward_pre_hook(lambda module, args, index=index: watch.note(f"forward {index}"))
        with Watch(device) as watch:
            model(torch.randn(BATCH, WIDTH, device=device))
        lines.append(f"{name + ':':<11}" + ", ".join(watch.log))
        del model
    say("\n".join(lines))


if __name__ == "__main__":
    run_on_ranks(forward_order)

######################################################################
# Without prefetching, each block's weights are gathered just before it
# runs. With it, the second block's gather comes before the first block
# runs, and from then on every gather is one block ahead.
#
# Memory per rank, measured
# -------------------------
#
# Now each choice trains for two steps with Adam, and DDP as well, for
# comparison. The first step creates Adam's state (two running averages per
# parameter); the second is measured. For each, every rank reports, in MiB
# above what it had allocated before building the model:
#
# - **held**: what stays allocated between two steps: the parameters (or the
#   shards) and the optimizer's state, plus DDP's buffers for the gradients;
# - **forward** and **backward**: the peak during each pass, which adds the
#   gathered weights, the gradients and the activations kept for the backward
#   pass.


def step_memory(model, optimizer, device):
    """Trains MODEL one step, measured: (held before it, peak of the forward pass, peak of the backward pass)."""
    inputs = torch.randn(BATCH, WIDTH, device=device)
    held = allocated(device)
    with Watch(device) as forward:
        loss = model(inputs).pow(2).mean()
    with Watch(device) as backward:
        loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return held, forward.peak, backward.peak


def measure(rank, device, name):
    gc.collect()
    start = allocated(device)
    if name == "DDP":
        torch.manual_seed(0)
        model = DDP(make_model().to(device), device_ids=[rank] if device.type == "cuda" else None)
    else:
        model = build(rank, device, **CHOICES[name])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    step_memory(model, optimizer, device)  # creates Adam's state
    measured = step_memory(model, optimizer, device)
    del model, optimizer
    return [None if start is None or value is None else value - start for value in measured]


def memory_table(rank, world_size):
    device = device_for(rank)
    lines = [f"{'MiB':<12}{'held':>8}{'forward':>9}{'backward':>10}"]
    for name in ("DDP", *CHOICES):
        held, forward, backward = measure(rank, device, name)
        lines.append(f"{name:<12}{mib(held):>8}{mib(forward):>9}{mib(backward):>10}")
    say("\n".join(lines))


if __name__ == "__main__":
    run_on_ranks(memory_table)

######################################################################
# How to read the table (its numbers are this run's; on a CPU they include
# everything the process allocated, so they move a little from run to run):
#
# - **DDP** holds everything whole on every rank: the parameters, Adam's two
#   averages of each, and buffers as large as the gradients, in which DDP
#   sums them.
# - Every FSDP2 row holds about one over the number of ranks of that
#   (without DDP's buffers). That is the saving that lets a model larger than
#   one device train on several.
# - **one unit** gathers the whole model for the forward pass: its peaks
#   come back up towards DDP's.
# - **per block** keeps the peaks low: the gathered weights of about one
#   block at a time, plus its gradients on the way back.
# - **no reshard** keeps every block's gathered weights from the forward pass
#   to the backward pass: its forward peak is the highest of the FSDP2 rows
#   with blocks, and in exchange its backward pass gathers nothing.
# - **prefetch** holds the next block's weights early: a block more in the
#   forward peak, at most; on GPUs that buys the overlap of gathering and
#   computing.
#
# The activations kept for the backward pass are not sharded: with larger
# batches or longer sequences they become the largest part. Activation
# checkpointing (``torch.utils.checkpoint``, applied to each block) frees them
# after the forward pass and computes them again in the backward pass.
#
# What to remember
# ----------------
#
# - Build a large model under ``torch.device("meta")``, shard it, then
#   ``to_empty`` and initialize: no rank ever holds the whole model.
# - On a CPU mesh, random initialization of sharded parameters needs a seed
#   per rank; on GPUs, DTensor's random operators take care of it.
# - Call ``fully_shard`` on each block, then on the whole model.
# - ``reshard_after_forward`` and prefetching trade memory for communication
#   and overlap; measure on your model before you choose.
#
# Where to go next
# ----------------
#
# - :ref:`Tensor parallelism <sphx_glr_beginner_parallel_3_tensor_parallel_tutorial.py>`
#   splits each layer's computation across ranks, not only its storage.
# - `torch.distributed.fsdp.fully_shard API reference
#   <https://pytorch.org/docs/stable/distributed.fsdp.fully_shard.html>`_
# - `torch.utils.checkpoint <https://pytorch.org/docs/stable/checkpoint.html>`_
