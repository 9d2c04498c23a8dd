"""
Sharding a model with FSDP2
===========================

Give each process a slice of every parameter instead of a copy of the model.

With :class:`~torch.nn.parallel.DistributedDataParallel` (DDP), every process
keeps a whole copy of the model: all the parameters, all the gradients and all
of the optimizer's state. Add processes and you get more throughput, but never
room for a bigger model. **Fully Sharded Data Parallel** (FSDP) removes that
limit: each process keeps only a slice, a **shard**, of every parameter, and
the full tensors exist only briefly, while a layer runs.

This tutorial uses FSDP2, the :func:`torch.distributed.fsdp.fully_shard`
function. You will:

- look at what each process holds before and after sharding: the shape of
  every parameter and how many bytes it takes on each rank;
- watch a layer's weight being gathered whole for its forward pass;
- run a training step on the sharded model and check its gradients against
  the same step in a single process;
- compute in ``bfloat16`` while the parameters stay in ``float32``, with
  mixed precision.

The :ref:`next tutorial <sphx_glr_beginner_parallel_2_fsdp2_memory_tutorial.py>`
builds a model without ever holding it whole on one rank and measures the
memory each rank needs.

Read the :ref:`DDP tutorial <sphx_glr_beginner_ddp_tutorial.py>` first: this
one starts its processes the same way, on any machine: two processes over
``gloo`` without a GPU, one process per GPU over ``nccl`` with GPUs. The first
thing it prints says which.
"""

######################################################################
# What FSDP does
# --------------
#
# Sharding splits every parameter along its first dimension: with two ranks,
# rank 0 keeps the first half of the rows of each weight matrix and rank 1 the
# second half. The gradients and the optimizer's state follow the same split,
# so each rank updates only its own rows.
#
# To run a layer, the ranks need its whole weights for a moment. Before the
# layer's forward pass, an **all-gather** collects the shards from every rank
# into the full tensors; after it, the full tensors are dropped again. The
# backward pass gathers them once more, and a **reduce-scatter** sums the
# gradients across ranks and leaves each rank only the part of the sum that
# matches its own shard. Memory then holds whole tensors for one layer at a
# time, not for the whole model.
#
# Imports and the processes
# -------------------------
#
# The start-up code is the DDP tutorial's: ``run_on_ranks(fn)`` starts one
# process per rank (one per GPU, or two on the CPU), which meet through a
# ``FileStore`` in a folder of their own, each running ``fn`` with
# ``THREADS`` threads (the cores divided among the processes, so that they do
# not compete for them). ``say`` is its too: every rank calls it at the same
# point, and rank 0 prints every rank's text, in rank order, each line tagged
# with its rank.

# tutorials-needs: gpus=2
import gc
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

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
# The model
# ---------
#
# A stack of linear layers, large enough for the savings to show and small
# enough to train in a moment on a CPU. ``shard_model`` calls ``fully_shard``
# on each linear layer, then on the whole model. Each call makes one **unit**:
# the parameters of a unit are gathered together, when that unit runs. With
# one unit per layer, the full tensors of only one layer are in memory at a
# time; the last call, on the whole model, takes charge of any parameter that
# no layer claimed.

FEATURES, HIDDEN = 256, 1024


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
                         nn.Linear(HIDDEN, FEATURES))


def shard_model(model, **options):
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, **options)
    return fully_shard(model, **options)


def tensor_bytes(tensor):
    """The bytes this rank's part of TENSOR takes: its shard for a sharded tensor, the whole of a plain one."""
    local = tensor.to_local() if hasattr(tensor, "to_local") else tensor
    return local.numel() * local.element_size()


######################################################################
# Before and after sharding
# -------------------------
#
# Every rank builds the same model, then shards it. Before, each rank holds
# every parameter in full. After, each parameter is a
# :class:`~torch.distributed.tensor.DTensor`: a tensor that knows it is spread
# over several ranks. Its ``shape`` is still the shape of the whole tensor;
# its **placement**, ``Shard(dim=0)``, says that it is cut along dimension 0;
# and ``to_local()`` returns the part this rank stores.
#
# Then a forward pass shows the gather at work. A forward pre-hook on the
# first layer keeps the layer's weight as it is at the moment the layer's
# forward pass starts. FSDP's own pre-hook, the one that gathers the weight,
# was registered with ``prepend=True``: it runs before every other pre-hook
# of the layer, whenever those were registered, so ours sees the gathered
# weight.


def before_and_after(rank, world_size):
    device = device_for(rank)
    model = make_model().to(device)
    before = sum(tensor_bytes(p) for p in model.parameters())
    say(f"before: {len(list(model.parameters()))} parameters, {before / 2**20:.2f} MiB on this rank")
    shard_model(model)
    lines = [f"{'parameter':<10}{'whole shape':>14}{'local shape':>14}  placement"]
    for name, p in model.named_parameters():
        lines.append(f"{name:<10}{str(tuple(p.shape)):>14}{str(tuple(p.to_local().shape)):>14}  {p.placements}")
    after = sum(tensor_bytes(p) for p in model.parameters())
    lines.append(f"after: {after / 2**20:.2f} MiB on this rank, in {type(model[0].weight).__name__}s")
    say("\n".join(lines))
    seen = []
    model[0].register_forward_pre_hook(lambda module, inputs: seen.append(module.weight))
    model(torch.randn(8, FEATURES, device=device))
    during, after = seen[0], model[0].weight
    say(f"first weight during the forward pass: a {type(during).__name__} of shape {tuple(during.shape)}\n"
        f"first weight after it: a {type(after).__name__}, {tuple(after.to_local().shape)} on this rank")


if __name__ == "__main__":
    run_on_ranks(before_and_after)

######################################################################
# Each rank now stores a fraction of the model, one over the number of ranks,
# and the ranks' local shapes add up to the whole shapes. During the forward
# pass, the first layer's weight was an ordinary parameter of the whole
# shape; once the pass was over, FSDP had put the shard back in its place.
#
# A training step, checked
# ------------------------
#
# Training a sharded model looks the same as training any other: the
# optimizer is built from ``model.parameters()`` (the shards), and the loop
# is unchanged. Each rank takes its own share of a batch, as with DDP:
# ``BATCH_PER_RANK`` examples, so that the batch divides evenly whatever the
# number of ranks. The gradients are averaged over the ranks during the
# backward pass, so they are those of one step, in one process, on the whole
# batch.
#
# To check that, every rank also runs that single-process step on a plain
# copy of the model, and compares the **gradients**: ``full_tensor()``
# gathers each sharded gradient into the whole tensor. Comparing the
# parameters after an optimizer step would be a weaker check: Adam's first
# step moves every parameter by about its learning rate whatever the size of
# the gradient, so a gradient off by a constant factor, a classic mistake in
# averaging, would leave the parameters nearly the same. Then both models
# take a step of SGD, whose update is the gradient times the learning rate,
# and their parameters are compared too: the optimizer updates each shard on
# its own rank.

BATCH_PER_RANK = 16


def make_batch(device, size):
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(size, FEATURES, generator=generator)
    return inputs.to(device), torch.sin(inputs).to(device)


def largest_gap(sharded, plain):
    """The largest difference between sharded tensors (gathered whole) and plain ones, relative to the largest value."""
    gap = max((s.full_tensor() - p).abs().max().item() for s, p in zip(sharded, plain))
    return gap / max(p.abs().max().item() for p in plain)


def train_and_check(rank, world_size):
    device = device_for(rank)
    inputs, targets = make_batch(device, BATCH_PER_RANK * world_size)
    mine = slice(rank * BATCH_PER_RANK, (rank + 1) * BATCH_PER_RANK)
    models = {"sharded": shard_model(make_model().to(device)), "plain": make_model().to(device)}
    batches = {"sharded": (inputs[mine], targets[mine]), "plain": (inputs, targets)}
    losses = {}
    for kind, model in models.items():
        losses[kind] = nn.functional.mse_loss(model(batches[kind][0]), batches[kind][1])
        losses[kind].backward()
    sharded, plain = (list(models[kind].parameters()) for kind in ("sharded", "plain"))
    gradients = largest_gap([p.grad for p in sharded], [p.grad for p in plain])
    for model in models.values():
        torch.optim.SGD(model.parameters(), lr=0.1).step()
    parameters = largest_gap(sharded, plain)
    say(f"loss on my {BATCH_PER_RANK} examples: {losses['sharded'].item():.5f}\n"
        f"largest difference from the single-process step, relative: "
        f"gradients {gradients:.1e}, parameters after the step {parameters:.1e}")


if __name__ == "__main__":
    run_on_ranks(train_and_check)

######################################################################
# The ranks saw different examples, so their losses differ; but the
# gradients, once averaged, are those of the single-process step, up to the
# rounding of adding numbers in another order, and so are the parameters
# after the step.
#
# Mixed precision
# ---------------
#
# FSDP2 can also gather the parameters in a smaller type and compute in it,
# while each rank keeps its shard in ``float32``. A
# :class:`~torch.distributed.fsdp.MixedPrecisionPolicy` says which types:
# here ``param_dtype=torch.bfloat16`` for the gathered weights, and so for
# the forward and backward computations, and ``reduce_dtype=torch.float32``
# for summing the gradients across ranks. ``bfloat16`` halves the bytes every
# gather sends. Recent GPUs compute in it natively and much faster; a CPU is
# often slower in it, but computes it correctly. So this section runs on a
# CPU and on any GPU that supports ``bfloat16``; on an older GPU, the ranks
# say so.
#
# The ranks compute the same loss and gradients as before, with the whole
# batch on every rank this time, in ``bfloat16``, and compare them with those
# computed in ``float32``.


def mixed_precision(rank, world_size):
    device = device_for(rank)
    if device.type == "cuda" and not torch.cuda.is_bf16_supported():
        say(f"{torch.cuda.get_device_name(device)} does not compute in bfloat16: nothing to show")
        return
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    model = shard_model(make_model().to(device), mp_policy=policy)
    exact = make_model().to(device)
    inputs, targets = make_batch(device, BATCH_PER_RANK * world_size)
    outputs = model(inputs)
    loss = nn.functional.mse_loss(outputs.float(), targets)
    loss.backward()
    exact_loss = nn.functional.mse_loss(exact(inputs), targets)
    exact_loss.backward()
    weight = model[0].weight
    gap = largest_gap([p.grad for p in model.parameters()], [p.grad for p in exact.parameters()])
    say(f"stored shard: {weight.to_local().dtype}, its gradient: {weight.grad.to_local().dtype}, "
        f"layer outputs: {outputs.dtype}\n"
        f"loss {loss.item():.5f} in bfloat16, {exact_loss.item():.5f} in float32\n"
        f"largest difference of the gradients from float32's, relative: {gap:.1e}")


if __name__ == "__main__":
    run_on_ranks(mixed_precision)

######################################################################
# The shards, their gradients and, once there is one, the optimizer's state
# are stored in ``float32``, and the optimizer updates the shards in
# ``float32``. But the forward and backward passes computed in ``bfloat16``,
# which keeps fewer digits: the loss is close to the ``float32`` one, not
# equal, and the gradients carry ``bfloat16``'s rounding, as the relative
# difference shows. Summing them in ``float32`` (``reduce_dtype``) adds only
# ``float32``'s much finer rounding to that; keeping the shards in ``float32``
# means that many small updates still add up. Mixed precision is a trade: less memory and
# communication, and much faster computation on recent GPUs, for gradients
# that are slightly less precise.
#
# Where to go next
# ----------------
#
# - :ref:`FSDP2 for models larger than one device <sphx_glr_beginner_parallel_2_fsdp2_memory_tutorial.py>`
#   builds the model without holding it whole, and measures each rank's
#   memory for each way of wrapping it.
# - `torch.distributed.fsdp.fully_shard API reference
#   <https://pytorch.org/docs/stable/distributed.fsdp.fully_shard.html>`_
# - `DTensor <https://pytorch.org/docs/stable/distributed.tensor.html>`_,
#   the sharded tensors that FSDP2 and tensor parallelism share.
