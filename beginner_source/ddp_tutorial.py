"""
Getting started with DistributedDataParallel
============================================

The :ref:`Data Parallelism tutorial <sphx_glr_beginner_data_parallel_tutorial.py>`
spread each batch over the GPUs of one machine from a single Python process.
:class:`torch.nn.parallel.DistributedDataParallel` (DDP), PyTorch's module for
distributed data-parallel training, takes the other road: it starts **one
process per GPU**, each with its own copy of the model, and keeps the copies
identical by averaging their gradients after every backward pass.

In this tutorial you will:

- start a group of processes and tell each one its rank and the world size;
- train a model wrapped in ``DistributedDataParallel``, with a
  ``DistributedSampler`` giving each process its own share of the data;
- check that every process ends with the same parameters;
- run one collective operation, ``all_reduce``, on its own;
- save a trained model from one process and load it in all of them;
- measure how fast the same model trains in one process and with DDP, and
  what happens when the processes compete for the same cores.

The tutorial runs on any machine: without a GPU it starts two processes that
talk over the ``gloo`` backend; with GPUs it starts one process per GPU and
uses ``nccl``. The first thing it prints says which.
"""

######################################################################
# Why one process per GPU
# -----------------------
#
# ``DataParallel`` runs in one process: at every step it copies the model to
# each GPU, scatters the batch, runs the replicas in threads and gathers the
# outputs on the first GPU. The threads share Python's global interpreter lock
# (GIL), and the first GPU does more work than the others.
#
# DDP gives each GPU a process of its own. The model is copied once, when it
# is wrapped; after that, each process reads its own part of the data, runs
# forward and backward on its own, and only the gradients travel: during the
# backward pass they are summed across processes and divided by their number,
# so every optimizer step starts from the same values everywhere. The same code
# runs on one machine or on many.
#
# Imports and the size of the group
# ---------------------------------
#
# One process per GPU where there are GPUs, two on the CPU otherwise. On one
# machine the processes share its CPU cores, so each one gets its share of
# them as threads: ``THREADS`` is the number of cores divided by the number of
# processes. Left alone, PyTorch would give every process as many threads as
# the machine has cores; the last section measures what that costs.

# tutorials-needs: gpus=2
import gc
import os
import sys
import tempfile
import time

import matplotlib.pyplot as plt
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

GPUS = torch.cuda.device_count()
WORLD_SIZE = GPUS if GPUS > 0 else 2
BACKEND = "nccl" if GPUS > 0 else "gloo"
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
THREADS = max(1, CORES // WORLD_SIZE)  # per process: together they use each core once
DEFAULT_THREADS = torch.get_num_threads()  # what PyTorch gives a process on its own

if __name__ == "__main__":
    where = f"{GPUS} GPUs" if GPUS else f"the CPU ({CORES} cores)"
    print(f"{WORLD_SIZE} processes over {BACKEND} on {where}, {THREADS} thread(s) each")

######################################################################
# The process group
# -----------------
#
# Every process calls :func:`torch.distributed.init_process_group` with its
# own **rank** (0, 1, …), the **world size** (how many processes there are)
# and a **store**, a small key-value table through which the processes find
# each other before they can exchange anything. Here the store is a
# ``FileStore``: a file in a folder created for this group alone, which every
# process opens. A ``TCPStore`` on a port chosen in advance would work too on
# one machine, but a port found free at one moment may be taken by another
# program (another build of this site, say) before the processes bind it; a
# folder of one's own cannot be. Across several machines, the store is a
# ``TCPStore`` on one of them, usually set up by ``torchrun``.
#
# ``rank_main`` is what every process runs: it sets its thread count, joins
# the group, runs the work it was given, and leaves the group with
# ``destroy_process_group``, which the ``finally`` clause calls even when the
# work fails.


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
        gc.collect()  # what fn left (a DDP model and its buffers) is freed while the group still exists
        dist.barrier()  # no rank leaves while another may still be finishing its last exchange
    finally:
        dist.destroy_process_group()


######################################################################
# Starting the processes
# ----------------------
#
# ``run_on_ranks(fn)`` creates the store's folder, starts ``WORLD_SIZE``
# processes, one per rank, each running ``rank_main`` with ``fn``, and waits
# for all of them; it fails if any rank fails. The folder is removed once
# they are done.
#
# .. note::
#
#    A script is started with the ``spawn`` method: each new process is a
#    fresh Python that imports this file again to find the function it must
#    run. That is why every step below that does work sits under
#    ``if __name__ == "__main__":``, and why the functions the ranks run are
#    defined at the top level. A notebook has no file to import again, so
#    there the processes are forked from the notebook's own process instead
#    (Linux and Colab); this is safe because the tutorial does not touch a GPU
#    in the notebook's process before its last section.

START_METHOD = "spawn" if hasattr(sys.modules["__main__"], "__file__") else "fork"


def run_on_ranks(fn, *args):
    with tempfile.TemporaryDirectory() as folder:
        mp.start_processes(rank_main, args=(WORLD_SIZE, os.path.join(folder, "store"), fn, *args),
                           nprocs=WORLD_SIZE, start_method=START_METHOD)


######################################################################
# Every rank reports, in order
# ----------------------------
#
# When several processes print at once, their lines mix in whatever order
# they happen to arrive. Here every rank hands its text to ``say`` instead.
# ``say`` is itself a collective (an operation every rank of the group takes
# part in, as the next section explains): every rank calls it at the same
# point, rank 0 gathers all the texts with
# :func:`~torch.distributed.gather_object` and prints them in rank order, each
# line tagged with the rank that wrote it.


def say(text):
    """Every rank calls this with its own text; rank 0 prints all of them, in rank order, each line tagged."""
    texts = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(text, texts, dst=0)
    if texts is not None:
        for rank, said in enumerate(texts):
            for line in said.splitlines():
                print(f"[rank {rank}] {line}", flush=True)


######################################################################
# One collective on its own: ``all_reduce``
# -----------------------------------------
#
# A **collective** is an operation every rank of the group takes part in.
# ``all_reduce`` combines a tensor held by every rank (here, a sum) and leaves
# the result on all of them. It is what DDP does with the gradients.


def show_all_reduce(rank, world_size):
    values = torch.tensor([rank + 1.0, 10.0 * (rank + 1)], device=device_for(rank))
    before = values.tolist()
    dist.all_reduce(values, op=dist.ReduceOp.SUM)
    say(f"before all_reduce: {before}\nafter all_reduce:  {values.tolist()}")


if __name__ == "__main__":
    run_on_ranks(show_all_reduce)

######################################################################
# Training with DDP
# -----------------
#
# Each rank builds the same model (the seed makes the initial weights equal,
# and DDP copies rank 0's weights to every rank anyway), moves it to its
# device and wraps it in ``DDP``. A ``DistributedSampler`` gives each rank a
# different share of the dataset; ``set_epoch`` reshuffles the shares at every
# epoch. After the steps, every rank reports a checksum of its parameters:
# they must be equal, since every optimizer step started from the same
# averaged gradients.

FEATURES, HIDDEN, CLASSES = 20, 64, 4


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def make_dataset(size=512):
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(size, FEATURES, generator=generator)
    return TensorDataset(inputs, inputs[:, :CLASSES].argmax(dim=1))


def checksum(model):
    return sum(p.detach().double().sum().item() for p in model.parameters())


def wrap(model, rank):
    return DDP(model.to(device_for(rank)), device_ids=[rank] if BACKEND == "nccl" else None)


def train(rank, world_size, epochs=2, batch_size=32):
    """Trains a DDP model on this rank's share of the data; returns the model and what happened, as text."""
    device = device_for(rank)
    model = wrap(make_model(), rank)
    sampler = DistributedSampler(make_dataset(), num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(make_dataset(), batch_size=batch_size, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    lines = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(inputs.to(device)), targets.to(device))
            loss.backward()  # DDP averages the gradients across ranks here
            optimizer.step()
        lines.append(f"epoch {epoch}: {len(loader)} batches, last loss {loss.item():.4f}")
    return model, "\n".join(lines)


def train_and_report(rank, world_size):
    model, report = train(rank, world_size)
    say(f"{report}\nparameter checksum: {checksum(model.module):.6f}")


if __name__ == "__main__":
    run_on_ranks(train_and_report)

######################################################################
# Each rank saw different batches, so the losses differ, but the checksums
# are the same on every rank.
#
# Saving and loading a checkpoint
# -------------------------------
#
# Since the copies are identical, one rank is enough to save them: after
# training, rank 0 writes the model's ``state_dict`` (that of
# ``model.module``, the model inside the DDP wrapper). The others wait at a
# ``barrier``, a collective that returns only when every rank has reached it,
# so that nobody reads the file before it is complete.
#
# Then every rank builds a new, untrained model and loads the checkpoint into
# it with ``map_location``, which puts the tensors on that rank's own device
# instead of the one they were saved from. The checksum before loading is the
# untrained model's; after loading, it must be the trained one.


def save_and_load(rank, world_size, path):
    trained, _ = train(rank, world_size)
    if rank == 0:
        torch.save(trained.module.state_dict(), path)
    dist.barrier()
    fresh = wrap(make_model(), rank)
    untrained = checksum(fresh.module)
    state = torch.load(path, map_location=device_for(rank), weights_only=True)
    fresh.module.load_state_dict(state)
    say(f"trained model:          checksum {checksum(trained.module):.6f}"
        + (", saved" if rank == 0 else "") + "\n"
        f"new model, untrained:   checksum {untrained:.6f}\n"
        f"new model, loaded on {device_for(rank)}: checksum {checksum(fresh.module):.6f}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        run_on_ranks(save_and_load, os.path.join(folder, "model.pt"))

######################################################################
# How fast, here
# --------------
#
# The same model, trained for a number of steps of ``BATCH`` examples each:
# in one process, and with DDP, where each of the ``WORLD_SIZE`` processes
# takes a batch of ``BATCH``, so that a DDP step handles ``WORLD_SIZE`` times
# more examples. The single process gets the threads one DDP process gets
# (``THREADS``), or one GPU where there are GPUs: each DDP process has its
# own share of the machine, and the comparison shows what DDP gains by
# adding processes and what their coordination costs. Each rank also times
# ``all_reduce`` of a tensor as large as all the gradients together: what a
# DDP step adds to the work of one process.
#
# On a machine without a GPU the table has one more row: DDP again, with
# every process keeping PyTorch's default number of threads (fewer steps for
# that row, which is slow). With more than one GPU, it also has a row for
# ``DataParallel`` on all of them.
#
# Everything was measured while this tutorial ran, on the machine it ran on.
# Run it again on yours and compare.

BATCH = 64


def steps_per_second(model, device, steps, batch=BATCH):
    inputs = torch.randn(batch, FEATURES, device=device)
    targets = torch.randint(0, CLASSES, (batch,), device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(steps + 5):  # 5 steps to warm up
        if step == 5:
            if device.type == "cuda":
                torch.cuda.synchronize()
            started = time.perf_counter()
        optimizer.zero_grad()
        loss_fn(model(inputs), targets).backward()
        optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps / (time.perf_counter() - started)


def all_reduce_ms(model, device, repeats=50):
    """Milliseconds one all_reduce of a tensor holding as many numbers as MODEL's parameters takes, on average."""
    gradients = torch.zeros(sum(p.numel() for p in model.parameters()), device=device)
    dist.all_reduce(gradients)  # once to warm up
    if device.type == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(repeats):
        dist.all_reduce(gradients)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / repeats * 1000


def time_ddp(rank, world_size, threads, steps, results):
    torch.set_num_threads(threads)
    device = device_for(rank)
    model = wrap(make_model(), rank)
    rate = steps_per_second(model, device, steps)
    exchange = all_reduce_ms(model.module, device)
    if rank == 0:
        results.put((rate, exchange))


if __name__ == "__main__":
    results = mp.get_context(START_METHOD).SimpleQueue()
    runs = {"DDP": (THREADS, 200)}  # name: (threads per process, steps)
    if not GPUS:
        runs["DDP, default threads"] = (DEFAULT_THREADS, 20)
    table = []  # (name, processes, threads each, steps, examples per step, steps per second)
    for name, (threads, steps) in runs.items():
        run_on_ranks(time_ddp, threads, steps, results)
        rate, exchange = results.get()
        table.append((name, WORLD_SIZE, threads, steps, BATCH * WORLD_SIZE, rate))
        if name == "DDP":
            print(f"all_reduce of {sum(p.numel() for p in make_model().parameters())} gradients: "
                  f"{exchange:.2f} ms, with {threads} thread(s) per process")
    # From here on this process may use the GPUs: no more processes are started.
    device = torch.device("cuda:0" if GPUS else "cpu")
    torch.set_num_threads(THREADS)
    table.insert(0, ("one process", 1, THREADS, 200, BATCH, steps_per_second(make_model().to(device), device, 200)))
    if GPUS > 1:
        model = nn.DataParallel(make_model().to(device))
        table.append(("DataParallel", 1, THREADS, 200, BATCH * GPUS,
                      steps_per_second(model, device, 200, batch=BATCH * GPUS)))

    print(f"{'':<22}{'processes':>10}{'threads':>8}{'steps':>6}{'ms/step':>9}{'examples/s':>12}")
    for name, processes, threads, steps, examples, rate in table:
        print(f"{name:<22}{processes:>10}{threads:>8}{steps:>6}{1000 / rate:>9.2f}{rate * examples:>12.0f}")

    fig, ax = plt.subplots(figsize=(6, 2.6))
    speeds = [examples * rate for *_, examples, rate in table]
    bars = ax.barh([row[0] for row in table], speeds, color=["#7f7f7f", "#ee4c2c", "#1f77b4", "#2ca02c"][: len(table)])
    ax.bar_label(bars, fmt="%.0f", padding=3, fontsize=8)
    ax.set_xscale("log")  # the rows differ by orders of magnitude: on a linear scale the slowest would not show
    ax.set_xlim(min(speeds) / 2, max(speeds) * 4)  # room for the labels
    ax.invert_yaxis()
    ax.set_xlabel("examples per second, log scale (higher is faster)")
    # No title: the text says what the chart shows, in the reader's language, and the engine gives an
    # untitled figure an alt text in that language too (a title drawn into the image would be English in each).
    fig.tight_layout()

######################################################################
# How to read it:
#
# - **One process against DDP.** A DDP step does the work of one process on
#   its own batch, then waits for the ``all_reduce`` of the gradients (DDP
#   starts it during the backward pass, to overlap the two where it can). So
#   a DDP step takes about as long as a step of one process, plus whatever
#   part of the ``all_reduce`` the backward pass could not hide, and DDP
#   processes more examples per second only when that part is short compared
#   with the step's own computation. A model as small as this one
#   computes little per step, so its ``all_reduce``, timed above, weighs a lot;
#   with larger models and batches, and GPUs linked by fast interconnects, DDP
#   processes close to ``WORLD_SIZE`` times more examples per second than one
#   process.
# - **Threads.** The ``default threads`` row (on a machine without a GPU)
#   runs the same DDP processes with PyTorch's default thread count, as many
#   threads each as the machine has cores. Together they then have more
#   threads than there are cores. An operation split over several threads
#   ends only when its last thread is done, and with too many threads some
#   of them wait for a core while the others wait for them: the whole group
#   slows down. That is why ``rank_main`` sets ``THREADS``, and why
#   ``torchrun`` sets ``OMP_NUM_THREADS=1`` for the processes it starts unless
#   told otherwise. The same happens to any process whose threads outnumber
#   the cores left free by other programs.
#
# Where to go next
# ----------------
#
# - The :ref:`Data Parallelism tutorial <sphx_glr_beginner_data_parallel_tutorial.py>`
#   shows how ``DataParallel`` splits a batch, for comparison.
# - :ref:`Sharding a model with FSDP2 <sphx_glr_beginner_parallel_1_fsdp2_tutorial.py>`
#   begins the section on dividing the model itself among the processes.
# - `DistributedDataParallel API reference
#   <https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html>`_
# - `torch.distributed: collectives and backends
#   <https://pytorch.org/docs/stable/distributed.html>`_
