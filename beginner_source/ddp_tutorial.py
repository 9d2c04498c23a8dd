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
- save a checkpoint from one process and load it in all of them;
- measure how fast the same model trains in one process, with ``DataParallel``
  and with DDP, on the machine that built this page.

Everything on this page was run when the site was built: on a machine without
a GPU the tutorial starts two processes that talk over the ``gloo`` backend; on
a GPU machine it starts one process per GPU and uses ``nccl``. The line under
this introduction says which.
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

# tutorials-needs: gpus=2
import gc
import os
import socket
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

# One process per visible GPU; two processes on the CPU when there is none.
GPUS = torch.cuda.device_count()
WORLD_SIZE = GPUS if GPUS > 0 else 2
BACKEND = "nccl" if GPUS > 0 else "gloo"

######################################################################
# The process group
# -----------------
#
# Every process calls :func:`torch.distributed.init_process_group` with the
# same address, its own **rank** (0, 1, …) and the **world size** (how many
# processes there are). The address is a free TCP port on this machine,
# chosen when the tutorial runs, so that two builds on one machine never
# collide. ``destroy_process_group`` ends the group; the ``finally`` clause
# calls it even when a rank fails.


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
        gc.collect()  # what fn left (a DDP model and its buffers) is freed while the group still exists
        dist.barrier()  # no rank leaves while another may still be finishing its last exchange
    finally:
        dist.destroy_process_group()


######################################################################
# Starting the processes
# ----------------------
#
# ``run_on_ranks(fn)`` starts ``WORLD_SIZE`` processes, one per rank, each
# running ``rank_main`` with ``fn``, and waits for all of them; it fails if any
# rank fails.
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
    mp.start_processes(rank_main, args=(WORLD_SIZE, free_port(), fn, *args), nprocs=WORLD_SIZE,
                       start_method=START_METHOD)


######################################################################
# One collective on its own: ``all_reduce``
# -----------------------------------------
#
# A **collective** is an operation every rank of the group takes part in.
# ``all_reduce`` combines a tensor held by every rank (here, a sum) and leaves
# the result on all of them. It is what DDP does with the gradients.


def show_all_reduce(rank, world_size):
    values = torch.tensor([rank + 1.0, 10.0 * (rank + 1)], device=device_for(rank))
    print(f"[rank {rank}] before all_reduce: {values.tolist()}")
    dist.all_reduce(values, op=dist.ReduceOp.SUM)
    print(f"[rank {rank}] after all_reduce:  {values.tolist()}")


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
# epoch. After the steps, every rank prints a checksum of its parameters: they
# must be equal, since every optimizer step started from the same averaged
# gradients.

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


def train(rank, world_size, epochs=2, batch_size=32):
    device = device_for(rank)
    model = DDP(make_model().to(device), device_ids=[rank] if BACKEND == "nccl" else None)
    sampler = DistributedSampler(make_dataset(), num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(make_dataset(), batch_size=batch_size, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(inputs.to(device)), targets.to(device))
            loss.backward()  # DDP averages the gradients across ranks here
            optimizer.step()
        print(f"[rank {rank}] epoch {epoch}: {len(loader)} batches, last loss {loss.item():.4f}")
    print(f"[rank {rank}] parameter checksum: {checksum(model.module):.6f}")


if __name__ == "__main__":
    run_on_ranks(train)

######################################################################
# Each rank saw different batches, so the losses differ, but the checksums
# are the same on every rank.
#
# Saving and loading a checkpoint
# -------------------------------
#
# Since the copies are identical, one rank is enough to save them: rank 0
# writes the checkpoint. The others wait at a ``barrier``, a collective that
# returns only when every rank has reached it, so that nobody reads the file
# before it is complete. Every rank then loads it with ``map_location``, which
# puts the tensors on that rank's own device instead of the one they were
# saved from.


def save_and_load(rank, world_size, path):
    device = device_for(rank)
    model = DDP(make_model().to(device), device_ids=[rank] if BACKEND == "nccl" else None)
    if rank == 0:
        torch.save(model.module.state_dict(), path)
        print(f"[rank {rank}] saved the checkpoint")
    dist.barrier()
    state = torch.load(path, map_location=device, weights_only=True)
    model.module.load_state_dict(state)
    print(f"[rank {rank}] loaded it on {device}: checksum {checksum(model.module):.6f}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        run_on_ranks(save_and_load, os.path.join(folder, "model.pt"))

######################################################################
# How fast, here
# --------------
#
# The same model, trained for the same number of steps of 64 examples each:
# in one process, and with DDP, where each of the ``WORLD_SIZE`` processes
# takes a batch of 64, so a DDP step handles ``WORLD_SIZE`` times more data;
# where more than one GPU is visible, with ``DataParallel`` too. The chart
# below has a bar for each of these that ran, measured when the site was
# built, on the hardware named in the line under the introduction.
#
# On a machine without a GPU, both DDP processes share the same CPU cores as
# the single process, so DDP cannot be faster per step; it shows what the
# coordination costs. On several GPUs, each process has a GPU of its own, and
# DDP usually processes close to ``WORLD_SIZE`` times more examples per
# second than one GPU, and more than ``DataParallel``.

STEPS, BATCH = 60, 64


def steps_per_second(model, device, batch=BATCH, steps=STEPS):
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


def time_ddp(rank, world_size, results):
    device = device_for(rank)
    model = DDP(make_model().to(device), device_ids=[rank] if BACKEND == "nccl" else None)
    rate = steps_per_second(model, device)
    if rank == 0:
        results.put(rate)


if __name__ == "__main__":
    results = mp.get_context(START_METHOD).SimpleQueue()
    run_on_ranks(time_ddp, results)
    rates = {f"DDP, {WORLD_SIZE} processes": results.get()}
    # From here on this process may use the GPUs: no more processes are started.
    device = torch.device("cuda:0" if GPUS else "cpu")
    rates = {"one process": steps_per_second(make_model().to(device), device), **rates}
    if GPUS > 1:
        model = nn.DataParallel(make_model().to(device))
        rates["DataParallel"] = steps_per_second(model, device, batch=BATCH * GPUS)

    print(f"{'':<22}{'steps/s':>9}{'examples/s':>12}")
    for name, rate in rates.items():
        examples = rate * BATCH * (WORLD_SIZE if name.startswith("DDP") else GPUS if name == "DataParallel" else 1)
        print(f"{name:<22}{rate:>9.0f}{examples:>12.0f}")

    fig, ax = plt.subplots(figsize=(6, 2.6))
    ax.barh(list(rates), list(rates.values()), color=["#7f7f7f", "#ee4c2c", "#1f77b4"][: len(rates)])
    ax.invert_yaxis()
    ax.set_xlabel("training steps per second (higher is faster)")
    # No title: the text above says what the chart shows, in the reader's language, and the engine gives an
    # untitled figure an alt text in that language too (a title drawn into the image would be English in each).
    fig.tight_layout()

######################################################################
# Where to go next
# ----------------
#
# - The :ref:`Data Parallelism tutorial <sphx_glr_beginner_data_parallel_tutorial.py>`
#   shows how ``DataParallel`` splits a batch, for comparison.
# - `DistributedDataParallel API reference
#   <https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html>`_
# - `torch.distributed: collectives and backends
#   <https://pytorch.org/docs/stable/distributed.html>`_
