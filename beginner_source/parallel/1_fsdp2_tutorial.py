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
- run a training step on the sharded model and check it against the same step
  in a single process;
- measure how much memory each rank saves compared with DDP;
- compute in ``bfloat16`` while the parameters stay in ``float32``, with
  mixed precision.

Read the :ref:`DDP tutorial <sphx_glr_beginner_ddp_tutorial.py>` first: this
one starts its processes the same way. Everything below ran when the site was
built: on a machine without a GPU, two processes that talk over ``gloo``; on a
GPU machine, one process per GPU over ``nccl``. The line under this
introduction says which.
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
# The code that starts the processes is the DDP tutorial's: one process per
# GPU where there are GPUs, two on the CPU otherwise, started with ``spawn``
# from a script and forked in a notebook.

# tutorials-needs: gpus=2
import gc
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.nn.parallel import DistributedDataParallel as DDP

GPUS = torch.cuda.device_count()
WORLD_SIZE = GPUS if GPUS > 0 else 2
BACKEND = "nccl" if GPUS > 0 else "gloo"
START_METHOD = "spawn" if hasattr(sys.modules["__main__"], "__file__") else "fork"


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
        gc.collect()
        dist.barrier()
    finally:
        dist.destroy_process_group()


def run_on_ranks(fn, *args):
    mp.start_processes(rank_main, args=(WORLD_SIZE, free_port(), fn, *args), nprocs=WORLD_SIZE,
                       start_method=START_METHOD)


######################################################################
# Every rank reports, in order
# ----------------------------
#
# When several processes print at once, their lines mix in whatever order
# they happen to arrive. Here every rank hands its text to ``say`` instead.
# ``say`` is a collective: every rank calls it at the same point, rank 0
# gathers all the texts with :func:`~torch.distributed.gather_object` and
# prints them in rank order, each line tagged with the rank that wrote it.


def say(text):
    """Every rank calls this with its own text; rank 0 prints all of them, in rank order, each line tagged."""
    texts = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(text, texts, dst=0)
    if texts is not None:
        for rank, said in enumerate(texts):
            for line in said.splitlines():
                print(f"[rank {rank}] {line}", flush=True)


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
# forward pass starts. FSDP registered its own hook first, the one that
# gathers the weight, so ours runs after the gather.


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
# is unchanged. Each rank takes its own share of a batch, as with DDP. The
# gradients are averaged over the ranks during the backward pass, so the
# step is the same as one step, in one process, on the whole batch.
#
# To check that, every rank also runs that single-process step on a plain
# copy of the model, then gathers the sharded parameters back into whole
# tensors with ``full_tensor()`` and compares them.

BATCH = 64


def make_batch(device):
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(BATCH, FEATURES, generator=generator)
    return inputs.to(device), torch.sin(inputs).to(device)


def one_step(model, inputs, targets):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item(), optimizer


def train_and_check(rank, world_size):
    device = device_for(rank)
    inputs, targets = make_batch(device)
    mine = slice(rank * BATCH // world_size, (rank + 1) * BATCH // world_size)
    sharded = shard_model(make_model().to(device))
    loss, _ = one_step(sharded, inputs[mine], targets[mine])
    reference = make_model().to(device)
    one_step(reference, inputs, targets)
    gap = max((p.full_tensor() - q).abs().max().item()
              for p, q in zip(sharded.parameters(), reference.parameters()))
    return (f"loss on my {mine.stop - mine.start} examples: {loss:.5f}\n"
            f"largest difference from the single-process step: {gap:.2e}")


######################################################################
# Memory against DDP
# ------------------
#
# What does sharding save? After one step with the Adam optimizer, each rank
# holds the parameters, their gradients and Adam's two running averages for
# each parameter. Below, every rank trains the same model once with DDP and
# once with FSDP2, and adds up the bytes of the tensors it holds afterwards.
# On GPUs it also reports the peak of memory allocated during the step, which
# includes what the layers computed along the way. The processes first run
# the checked step of the previous section, and print its result above the
# table.


def held(model, optimizer):
    """Bytes of parameters, gradients and optimizer state held by this rank."""
    params = list(model.parameters())
    state = [t for s in optimizer.state.values() for t in s.values() if torch.is_tensor(t) and t.dim() > 0]
    return {"parameters": sum(map(tensor_bytes, params)),
            "gradients": sum(tensor_bytes(p.grad) for p in params if p.grad is not None),
            "optimizer": sum(map(tensor_bytes, state))}


def measure(rank, wrap):
    device = device_for(rank)
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    inputs, targets = make_batch(device)
    model = wrap(make_model().to(device))
    _, optimizer = one_step(model, inputs, targets)
    sizes = held(model, optimizer)
    if device.type == "cuda":
        sizes["peak on the GPU"] = torch.cuda.max_memory_allocated(device)
    return sizes


def check_and_compare(rank, world_size):
    checked = train_and_check(rank, world_size)
    gc.collect()
    with_ddp = measure(rank, lambda model: DDP(model, device_ids=[rank] if BACKEND == "nccl" else None))
    gc.collect()
    with_fsdp = measure(rank, shard_model)
    lines = [f"{'MiB':<16}{'DDP':>8}{'FSDP2':>8}"]
    for kind in with_ddp:
        lines.append(f"{kind:<16}{with_ddp[kind] / 2**20:>8.2f}{with_fsdp[kind] / 2**20:>8.2f}")
    kept = sum(with_fsdp[k] for k in ("parameters", "gradients", "optimizer"))
    total = sum(with_ddp[k] for k in ("parameters", "gradients", "optimizer"))
    lines.append(f"FSDP2 keeps {kept / total:.0%} of what DDP keeps, {(total - kept) / 2**20:.2f} MiB less")
    say(checked + "\n" + "\n".join(lines))


if __name__ == "__main__":
    run_on_ranks(check_and_compare)

######################################################################
# The ranks saw different examples, so their losses differ; after the step,
# their parameters match the single-process ones up to rounding.
#
# Each of the three parts shrinks to about one over the number of ranks. The
# saving grows with the model: the activations and the one layer being
# gathered at any moment stay whole, everything else is divided.
#
# Mixed precision
# ---------------
#
# FSDP2 can also gather the parameters in a smaller type and compute in it,
# while each rank keeps its shard, and updates it, in ``float32``. A
# :class:`~torch.distributed.fsdp.MixedPrecisionPolicy` says which types:
# here ``param_dtype=torch.bfloat16`` for the gathered weights and the
# computation, and ``reduce_dtype=torch.float32`` for summing the gradients,
# so that the sum loses nothing. ``bfloat16`` halves the bytes every gather
# sends. Recent GPUs compute in it natively and much faster; a CPU is often
# slower in it, but computes it correctly. So this section runs on a CPU and on
# any GPU that supports ``bfloat16``; on an older GPU, the ranks say so.


def mixed_precision(rank, world_size):
    device = device_for(rank)
    if device.type == "cuda" and not torch.cuda.is_bf16_supported():
        say(f"{torch.cuda.get_device_name(device)} does not compute in bfloat16: nothing to show")
        return
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    model = shard_model(make_model().to(device), mp_policy=policy)
    inputs, targets = make_batch(device)
    outputs = model(inputs)
    loss = nn.functional.mse_loss(outputs.float(), targets)
    loss.backward()
    weight = model[0].weight
    with torch.no_grad():
        exact = nn.functional.mse_loss(make_model().to(device)(inputs), targets)
    say(f"stored shard: {weight.to_local().dtype}, gradient: {weight.grad.to_local().dtype}, "
        f"layer outputs: {outputs.dtype}\n"
        f"loss {loss.item():.5f} in bfloat16, {exact.item():.5f} in float32")


if __name__ == "__main__":
    run_on_ranks(mixed_precision)

######################################################################
# The loss computed in ``bfloat16`` is close to the ``float32`` one, not
# equal: ``bfloat16`` keeps fewer digits. The shards and their gradients
# stayed in ``float32``, so the optimizer's updates are as precise as before.
#
# Where to go next
# ----------------
#
# - :ref:`Tensor parallelism <sphx_glr_beginner_parallel_2_tensor_parallel_tutorial.py>`
#   splits each layer's computation across ranks, not only its storage.
# - `torch.distributed.fsdp.fully_shard API reference
#   <https://pytorch.org/docs/stable/distributed.fsdp.fully_shard.html>`_
# - `DTensor <https://pytorch.org/docs/stable/distributed.tensor.html>`_,
#   the sharded tensors that FSDP2 and tensor parallelism share.
