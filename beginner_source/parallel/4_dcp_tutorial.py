"""
Saving and loading sharded models with distributed checkpoints
==============================================================

Save a sharded model from all ranks at once, resume training from it resharded, and load it for inference.

When a model is sharded, no process holds all of it. ``torch.save`` on one
rank would write only that rank's pieces, and gathering the whole model onto
one rank first costs the memory that sharding was meant to save.
:mod:`torch.distributed.checkpoint` (DCP) takes another approach: **every rank
writes its own shards, in parallel**, and a small metadata file records
where each piece of each tensor lies. When the checkpoint is loaded, every
reader asks only for the pieces it needs, whatever sharding it has now.

In this tutorial you will:

- shard a model with ``fully_shard``, train it for a few steps, and save the
  model and its optimizer through an application state that DCP saves and
  loads by itself (a ``Stateful`` object);
- look at the files the ranks wrote;
- resume training from the checkpoint in new processes, with the model
  sharded differently (tensor parallelism instead of ``fully_shard``), and
  check that training goes on exactly as if it had never stopped;
- load the model alone into one process for inference, in place with
  ``dcp.load`` and by converting the checkpoint with ``dcp_to_torch_save``;
- load into a model that has parameters the checkpoint lacks, with
  ``allow_partial_load``.

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
import warnings

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.checkpoint.api import CheckpointException
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

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
# The model, its training and its application state
# -------------------------------------------------
#
# The model is a small two-layer network, trained with Adam. The batch of
# each step comes from a generator seeded with the step's number, so that a
# run resumed at step ``n`` sees the same batches as a run that never
# stopped.
#
# What a checkpoint must hold to resume training is more than the weights:
# the optimizer's state too (Adam's two running averages of every parameter,
# and its step counts), or the first steps after resuming would not be those
# of the run that stopped. ``AppState`` gathers both behind DCP's ``Stateful``
# protocol: DCP calls its ``state_dict()`` to know what to save or what to
# load into, and its ``load_state_dict()`` to hand it what it loaded.
#
# ``get_state_dict(model, optimizer)`` returns the two state dicts with their
# sharded tensors as they are (nothing is gathered), under names that do not
# depend on the wrappers: ``0.weight`` whether the model was sharded by
# ``fully_shard`` or split by tensor parallelism. ``set_state_dict`` puts them
# back into a model and an optimizer of any layout. An optimizer's own
# ``state_dict()`` names each parameter by a number instead, which would not
# match across layouts.

FEATURES, HIDDEN, CLASSES = 16, 32, 4
SAVED_AT, STEPS = 3, 6  # the checkpoint is taken after SAVED_AT steps; training goes on to STEPS


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def batch(step, device):
    generator = torch.Generator().manual_seed(100 + step)
    inputs = torch.randn(8, FEATURES, generator=generator)
    return inputs.to(device), torch.randint(0, CLASSES, (8,), generator=generator).to(device)


def train(model, optimizer, steps, device):
    """Trains MODEL for the steps numbered STEPS; returns their losses."""
    losses = []
    for step in steps:
        inputs, targets = batch(step, device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


class AppState(Stateful):
    """The model and its optimizer, as DCP saves and loads them."""

    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def state_dict(self):
        model_state, optimizer_state = get_state_dict(self.model, self.optimizer)
        return {"model": model_state, "optim": optimizer_state}

    def load_state_dict(self, state):
        set_state_dict(self.model, self.optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])


def losses_text(steps, losses):
    return ", ".join(f"{step}: {loss:.6f}" for step, loss in zip(steps, losses))


######################################################################
# Saving from every rank
# ----------------------
#
# Each rank builds the model, shards it over a one-dimensional device mesh
# with ``fully_shard`` (each parameter becomes a ``DTensor`` whose
# ``to_local()`` is the rank's own rows), trains it for ``SAVED_AT`` steps and
# saves it with ``dcp.save``: each rank writes its own part, and the
# coordinator (rank 0) writes the metadata. Then training goes on to step
# ``STEPS``, and the ranks report the losses of the steps after the
# checkpoint: what a resumed run must reproduce. They are handed back to this
# process through a queue.


def shapes(state):
    """One line per tensor: its name, its whole shape and the shape this rank holds."""
    lines = []
    for name, value in state.items():
        local = value.to_local() if isinstance(value, DTensor) else value
        lines.append(f"  {name:<10} whole {str(list(value.shape)):<9} here {list(local.shape)}")
    return "\n".join(lines)


def train_and_save(rank, world_size, folder, results):
    device = device_for(rank)
    mesh = init_device_mesh(device.type, (world_size,))
    model = make_model().to(device)
    for layer in (model[0], model[2]):
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    train(model, optimizer, range(SAVED_AT), device)
    app = AppState(model, optimizer)
    dcp.save({"app": app}, checkpoint_id=os.path.join(folder, "ckpt"))
    after = train(model, optimizer, range(SAVED_AT, STEPS), device)
    if rank == 0:
        results.put(after)
    say(f"parameters after fully_shard:\n{shapes(app.state_dict()['model'])}\n"
        f"saved after step {SAVED_AT - 1}; losses of the steps after it, {losses_text(range(SAVED_AT, STEPS), after)}")


if __name__ == "__main__":
    workdir = tempfile.TemporaryDirectory()  # removed in the last section
    checkpoint = os.path.join(workdir.name, "ckpt")
    results = mp.get_context(START_METHOD).SimpleQueue()
    run_on_ranks(train_and_save, workdir.name, results)
    uninterrupted = results.get()

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
# settings, such as its learning rate, and its step counts) was written only
# once, by one of the ranks, which is why the data files differ in size. The
# sizes below are those of this run.


def show_files(folder):
    for name in sorted(os.listdir(folder)):
        print(f"{name:<16}{os.path.getsize(os.path.join(folder, name)):>8} bytes")


if __name__ == "__main__":
    show_files(checkpoint)

######################################################################
# Resuming, resharded
# -------------------
#
# To load a DCP checkpoint, you hand ``dcp.load`` a state dict whose tensors
# already have the shape and the sharding you want: it fills them in place.
# So the new processes first build the model and the optimizer in their new
# layout, then load.
#
# The layout here is **tensor parallelism**, with ``parallelize_module``:
# ``ColwiseParallel`` splits the first layer's weight by its rows (dimension
# 0, as ``fully_shard`` did), but ``RowwiseParallel`` splits the second
# layer's weight by its columns (dimension 1), and keeps that layer's bias
# whole on every rank. So a rank now needs pieces that another rank wrote:
# DCP's planner sees which stored pieces overlap each rank's new pieces, and
# each rank reads only those. The optimizer's averages follow their
# parameters' new layout.
#
# Each rank loads through a new ``AppState``, trains the steps after the
# checkpoint, and compares its losses with the ones of the run that never
# stopped. For contrast, it does it a second time loading the model alone,
# with a new optimizer: the same weights, without Adam's history.


def resume(rank, world_size, folder, uninterrupted):
    device = device_for(rank)
    mesh = init_device_mesh(device.type, (world_size,))
    lines = []
    for what in ("model and optimizer", "model alone"):
        model = parallelize_module(make_model().to(device), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        if what == "model and optimizer":
            dcp.load({"app": AppState(model, optimizer)}, checkpoint_id=os.path.join(folder, "ckpt"))
            lines.append("tensor-parallel layout:\n" + shapes(model.state_dict()))
        else:
            dcp.load({"app": {"model": model.state_dict()}}, checkpoint_id=os.path.join(folder, "ckpt"))
        losses = train(model, optimizer, range(SAVED_AT, STEPS), device)
        gap = max(abs(a - b) for a, b in zip(losses, uninterrupted))
        lines.append(f"{what}: losses {losses_text(range(SAVED_AT, STEPS), losses)}; "
                     f"largest difference from the run that never stopped: {gap:.1e}")
    say("\n".join(lines))


if __name__ == "__main__":
    run_on_ranks(resume, workdir.name, uninterrupted)

######################################################################
# With the model and the optimizer, the resumed run repeats the losses of the
# run that never stopped, up to rounding (the layers' sums are made in
# another order when the model is split differently). With the model alone,
# the first step after the checkpoint has the same loss, since the weights
# are the same, and the next ones drift away: Adam without its history
# takes different steps.
#
# The second load asked for the model's entries only (``app.model.…``), and
# the optimizer's entries in the checkpoint were simply not read: a state
# dict may ask for fewer entries than the checkpoint has.
#
# Loading into one process, for inference
# ---------------------------------------
#
# To use the trained model on one machine, nothing needs to be gathered by
# the ranks. ``dcp.load`` also works in a process that belongs to no process
# group: ``no_dist=True`` tells it to read alone. Given the state dict of an
# ordinary, unsharded model, it reads every piece from the file that holds it
# and assembles whole tensors. It warns that it reads in a single process,
# which is what we ask here, so the code silences that one warning, by its
# message.
#
# Another way is to convert the checkpoint once into an ordinary
# ``torch.save`` file with ``dcp_to_torch_save``, which any program can then
# read with ``torch.load``, with no DCP at all. The file holds everything the
# checkpoint holds, nested as it was saved: here the model and the optimizer,
# under ``app``.
#
# Each way, the loaded model computes the loss of the first batch after the
# checkpoint, which must be the loss of that step in the run that never
# stopped.

NO_GROUP = "torch.distributed is disabled, unavailable or uninitialized"  # the warning's start


def load_alone(model):
    """Loads the model's part of the checkpoint into MODEL, in this process alone."""
    state = {"app": {"model": model.state_dict()}}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=NO_GROUP, category=UserWarning)
        dcp.load(state, checkpoint_id=checkpoint, no_dist=True)
    model.load_state_dict(state["app"]["model"])


def first_loss(model):
    inputs, targets = batch(SAVED_AT, torch.device("cpu"))
    with torch.no_grad():
        return nn.functional.cross_entropy(model(inputs), targets).item()


if __name__ == "__main__":
    in_place = make_model()
    load_alone(in_place)
    converted = make_model()
    dcp_to_torch_save(checkpoint, os.path.join(workdir.name, "model.pt"))
    whole = torch.load(os.path.join(workdir.name, "model.pt"), weights_only=True)
    converted.load_state_dict(whole["app"]["model"])
    print(f"the run that never stopped, step {SAVED_AT}: loss {uninterrupted[0]:.6f}")
    print(f"dcp.load in one process:            loss {first_loss(in_place):.6f}")
    print(f"dcp_to_torch_save, then torch.load: loss {first_loss(converted):.6f} "
          f"(the file holds {sorted(whole['app'])} under 'app')")

######################################################################
# ``model.state_dict()`` returns the model's own tensors, so ``dcp.load``
# filled the model's parameters directly; the ``load_state_dict`` call that
# follows is what you write in general, where a state dict may hold copies.
#
# A model with parameters the checkpoint lacks
# --------------------------------------------
#
# The other way round fails: by default, every entry of the state dict you
# load into must be in the checkpoint. A model that gained a layer since the
# checkpoint was saved (a new output layer for another task, say) asks for
# entries the checkpoint does not have, and ``dcp.load`` refuses.
# ``DefaultLoadPlanner(allow_partial_load=True)`` allows it: it loads what the
# checkpoint has and leaves the other entries as they were. Below, the model
# gets a third layer; the first attempt reports its error, the second loads
# the first two layers and leaves the new one as initialized.


def with_new_layer():
    return nn.Sequential(*make_model(), nn.Linear(CLASSES, 2))


if __name__ == "__main__":
    model = with_new_layer()
    state = {"app": {"model": model.state_dict()}}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=NO_GROUP, category=UserWarning)
        try:
            dcp.load(state, checkpoint_id=checkpoint, no_dist=True)
        except CheckpointException as error:  # its text ends with the error that stopped the load
            print("without allow_partial_load:", str(error).strip().splitlines()[-1])
        dcp.load(state, checkpoint_id=checkpoint, no_dist=True,
                 planner=dcp.DefaultLoadPlanner(allow_partial_load=True))
    model.load_state_dict(state["app"]["model"])
    untouched = torch.equal(model[3].weight, with_new_layer()[3].weight)
    print(f"with allow_partial_load: first layers loaded, loss {first_loss(model[:3]):.6f}; "
          f"new layer left as initialized: {untouched}")
    workdir.cleanup()

######################################################################
# ``allow_partial_load`` is about entries missing from the checkpoint. The
# reverse needs nothing: entries of the checkpoint that the state dict does
# not ask for are simply not read, as the resumed "model alone" run showed.
# Use it knowingly: a typo in a parameter's name is also "missing from the
# checkpoint", and would then leave that parameter silently untrained.
#
# Saving without stopping
# -----------------------
#
# ``dcp.save`` returns when every rank has written its part, and training
# waits for it. ``dcp.async_save`` takes the same arguments, copies the state
# to CPU memory (the staging), and returns a future while a separate thread
# writes the files: training goes on as soon as the copy is done. Call the
# future's ``result()`` before the next save, so that two saves never
# overlap. It needs memory for that copy, and, like ``save``, it is called by
# every rank.
#
# What to remember
# ----------------
#
# - ``dcp.save`` and ``dcp.load`` are collectives: every rank of the group
#   calls them, with its own part of the state dict. A process outside any
#   group may call them alone (``no_dist=True``).
# - A checkpoint does not depend on how it was sharded: you can load it with
#   another number of processes, another parallelism, or none.
# - ``dcp.load`` loads in place: build the model and the optimizer in their
#   new layout first, then load, through their state dicts or a ``Stateful``
#   object.
# - Save the optimizer with the model, through ``get_state_dict`` and
#   ``set_state_dict``, to resume training where it stopped.
# - ``dcp_to_torch_save`` turns a checkpoint into one ``torch.save`` file for
#   programs that do not use DCP.
#
# Where to go next
# ----------------
#
# - :ref:`Pipeline parallelism <sphx_glr_beginner_parallel_5_pipelining_tutorial.py>`
#   cuts the model into stages instead of sharding every layer.
# - `torch.distributed.checkpoint reference
#   <https://pytorch.org/docs/stable/distributed.checkpoint.html>`_
# - `DTensor and its placements
#   <https://pytorch.org/docs/stable/distributed.tensor.html>`_
