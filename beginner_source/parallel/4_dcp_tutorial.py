"""
Saving and loading sharded models with distributed checkpoints
==============================================================

Save a sharded model from all ranks at once and load it resharded.

When a model is sharded, no process holds all of it. ``torch.save`` on one
rank would write only that rank's pieces, and gathering the whole model onto
one rank first costs the memory that sharding was meant to save.
:mod:`torch.distributed.checkpoint` (DCP) takes another approach: **every rank
writes its own shards, in parallel**, and a small metadata file records
where each piece of each tensor lies. When the checkpoint is loaded, every
reader asks only for the pieces it needs, whatever sharding it has now.

In this tutorial you will:

- shard a model over the ranks with ``fully_shard``, train it for a step and
  save the model and its optimizer with ``dcp.save``;
- look at the files the ranks wrote;
- load the checkpoint into a single process that holds the whole model;
- load it into the ranks again, sharded differently (tensor parallelism
  instead of ``fully_shard``);
- check, each time, that every tensor is equal to the one that was saved.

Like the :ref:`DDP tutorial <sphx_glr_beginner_ddp_tutorial.py>`, this page
was run when the site was built: two processes over ``gloo`` on a machine
without a GPU, one process per GPU over ``nccl`` on a GPU machine. The line
under this introduction says which.
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
import tempfile
import time
import warnings

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, get_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, distribute_tensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

# One process per visible GPU; two processes on the CPU when there is none.
GPUS = torch.cuda.device_count()
WORLD_SIZE = GPUS if GPUS > 0 else 2
BACKEND = "nccl" if GPUS > 0 else "gloo"
DEVICE_TYPE = "cuda" if GPUS > 0 else "cpu"


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
# A model, sharded and trained for one step
# -----------------------------------------
#
# The model is a small two-layer network. Each rank builds it with the same
# seed, then ``fully_shard`` splits every parameter along its first dimension
# over the ranks of a one-dimensional device mesh: each parameter becomes a
# ``DTensor`` whose ``to_local()`` is the rank's own rows. One optimizer step
# with Adam gives the optimizer a state (two running averages per parameter),
# sharded like the parameters, so the checkpoint holds more than the weights.
#
# ``get_state_dict`` returns the model's and the optimizer's state dicts with
# their sharded tensors as they are: nothing is gathered. ``dcp.save`` then
# writes them to a folder, each rank its own part, and the coordinator (rank
# 0) writes the metadata. Rank 0 also writes a plain ``torch.save`` copy of
# the whole model, gathered with ``full_state_dict=True``, only so that the
# loads below have something to compare with.

FEATURES, HIDDEN, CLASSES = 16, 32, 4


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def train_one_step(model, device):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(8, FEATURES, generator=generator).to(device)
    targets = torch.randint(0, CLASSES, (8,), generator=generator).to(device)
    nn.functional.cross_entropy(model(inputs), targets).backward()
    optimizer.step()
    return optimizer


def shapes(state):
    """One line per tensor: its name, its whole shape and the shape this rank holds."""
    lines = []
    for name, value in state.items():
        local = value.to_local() if isinstance(value, DTensor) else value
        lines.append(f"  {name:<10} whole {str(list(value.shape)):<9} here {list(local.shape)}")
    return "\n".join(lines)


def save_sharded(rank, world_size, folder):
    mesh = init_device_mesh(DEVICE_TYPE, (world_size,))
    model = make_model().to(device_for(rank))
    for layer in (model[0], model[2]):
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = train_one_step(model, device_for(rank))

    model_state, optimizer_state = get_state_dict(model, optimizer)
    started = time.perf_counter()
    dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=os.path.join(folder, "ckpt"))
    seconds = time.perf_counter() - started
    say(f"parameters after fully_shard:\n{shapes(model_state)}\nsaved my shards in {seconds * 1000:.0f} ms")

    whole = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if rank == 0:  # with cpu_offload, only rank 0 receives the gathered tensors
        torch.save(whole, os.path.join(folder, "reference.pt"))


if __name__ == "__main__":
    workdir = tempfile.TemporaryDirectory()  # removed in the last section
    run_on_ranks(save_sharded, workdir.name)

######################################################################
# ``whole`` is the parameter's full shape; ``here`` is the part of it that
# the rank keeps and wrote. Each rank keeps its share of the rows of every
# weight and of every bias.
#
# What is on disk
# ---------------
#
# The checkpoint is a folder: one data file per rank (``__0_0.distcp``,
# ``__1_0.distcp``, …) and ``.metadata``, which maps every piece of every
# tensor to a file and an offset. No file holds the whole model. Each rank
# wrote its own shards; what every rank holds whole (the optimizer's
# settings, such as its learning rate, and its step counters) was written
# only once, by one of the ranks, which is why the data files differ in
# size. The sizes below are those of this run.


def show_files(folder):
    for name in sorted(os.listdir(folder)):
        print(f"{name:<16}{os.path.getsize(os.path.join(folder, name)):>8} bytes")


if __name__ == "__main__":
    show_files(os.path.join(workdir.name, "ckpt"))

######################################################################
# Loading into one process
# ------------------------
#
# To load a DCP checkpoint, you hand ``dcp.load`` a state dict whose tensors
# already have the shape and the sharding you want: it fills them in place.
# Here this is the state dict of an ordinary, unsharded model in this
# tutorial's main process, which is not part of any process group:
# ``no_dist=True`` tells ``dcp.load`` to read alone, without talking to other
# ranks (it warns that it does so, and the code below silences that
# warning). It reads every piece from the file that holds it and assembles
# whole tensors. Since the checkpoint also holds the optimizer, whose state we do
# not need here, the planner is told not to expect every stored key:
# ``dcp.load`` reads only what the state dict asks for.
#
# Each loaded tensor is compared, exactly, with the gathered copy of the
# trained model.


def compare(loaded, reference):
    """Whether every tensor of LOADED equals, bit for bit, the same-named tensor of REFERENCE."""
    return all(torch.equal(loaded[name].cpu(), reference[name].cpu()) for name in reference) \
        and loaded.keys() == reference.keys()


if __name__ == "__main__":
    reference = torch.load(os.path.join(workdir.name, "reference.pt"), weights_only=True)
    model = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))
    state = {"model": model.state_dict()}
    with warnings.catch_warnings():  # DCP warns that it reads in a single process: that is what we ask
        warnings.simplefilter("ignore", UserWarning)
        dcp.load(state, checkpoint_id=os.path.join(workdir.name, "ckpt"), no_dist=True,
                 planner=dcp.DefaultLoadPlanner(allow_partial_load=True))
    model.load_state_dict(state["model"])
    print(f"one process: {len(state['model'])} tensors loaded, all equal to the saved ones:",
          compare(model.state_dict(), reference))

######################################################################
# ``model.state_dict()`` returns the model's own tensors, so ``dcp.load``
# filled the model's parameters directly; the ``load_state_dict`` call that
# follows is what you write in general, where a state dict may hold copies.
#
# Loading into a different sharding
# ---------------------------------
#
# Now the ranks load the same checkpoint into another layout: **tensor
# parallelism**, with ``parallelize_module``. ``ColwiseParallel`` splits the
# first layer's weight by its rows (dimension 0, as ``fully_shard`` did), but
# ``RowwiseParallel`` splits the second layer's weight by its columns
# (dimension 1), and keeps that layer's bias whole on every rank. So a rank
# now needs pieces that another rank wrote: DCP's planner sees which stored
# pieces overlap each rank's new pieces, and each rank reads only those.
#
# Every rank then compares what it holds with the saved tensor: each rank
# reads the whole saved tensor and cuts its own piece out of it with
# ``distribute_tensor``, given the same mesh and placements
# (``src_data_rank=None`` makes each rank cut its piece locally instead of
# receiving it from rank 0). No rank gathers anything to check.


def load_resharded(rank, world_size, folder):
    mesh = init_device_mesh(DEVICE_TYPE, (world_size,))
    model = parallelize_module(make_model().to(device_for(rank)), mesh,
                               {"0": ColwiseParallel(), "2": RowwiseParallel()})
    state = {"model": model.state_dict()}
    dcp.load(state, checkpoint_id=os.path.join(folder, "ckpt"),
             planner=dcp.DefaultLoadPlanner(allow_partial_load=True))
    model.load_state_dict(state["model"])

    reference = torch.load(os.path.join(folder, "reference.pt"), weights_only=True)
    lines, equal = [], True
    for name, value in model.state_dict().items():
        placements = value.placements if isinstance(value, DTensor) else ()
        expected = reference[name].to(device_for(rank))
        if placements:
            expected = distribute_tensor(expected, mesh, placements, src_data_rank=None).to_local()
            value = value.to_local()
        equal = equal and torch.equal(value, expected)
        lines.append(f"  {name:<10} {', '.join(map(repr, placements)):<14} here {list(value.shape)}")
    say("tensor-parallel layout:\n" + "\n".join(lines) + f"\nevery piece equal to the saved one: {equal}")


if __name__ == "__main__":
    run_on_ranks(load_resharded, workdir.name)
    workdir.cleanup()

######################################################################
# ``Shard(dim=0)`` means the rank holds some rows of the tensor,
# ``Shard(dim=1)`` some of its columns, and ``Replicate()`` the whole tensor. The second
# layer's weight was written as rows by ``fully_shard`` and read back as
# columns, and the values are the same.
#
# What to remember
# ----------------
#
# - ``dcp.save`` and ``dcp.load`` are collectives: every rank of the group
#   calls them, with its own part of the state dict. A process outside any
#   group may call them alone.
# - A checkpoint does not depend on how it was sharded: you can load it with
#   another number of processes, another parallelism, or none.
# - ``dcp.load`` loads in place: build the model (and the optimizer) in their
#   new layout first, then ask for their state dicts, then load.
# - ``torch.distributed.checkpoint.state_dict`` (``get_state_dict``,
#   ``set_state_dict``) gives you state dicts of sharded models and of their
#   optimizers with names that do not depend on the wrappers.
#
# Where to go next
# ----------------
#
# - `torch.distributed.checkpoint reference
#   <https://pytorch.org/docs/stable/distributed.checkpoint.html>`_
# - `DTensor and its placements
#   <https://pytorch.org/docs/stable/distributed.tensor.html>`_
