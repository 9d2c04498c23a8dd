"""
Tensor parallelism
==================

Split the work of each layer across processes, and check it against one.

:ref:`FSDP2 <sphx_glr_beginner_parallel_1_fsdp2_tutorial.py>` divides the
storage of a model among processes, but each layer still runs whole, on every
rank, once its weights are gathered. **Tensor parallelism** divides the work
of a layer itself: each rank keeps part of a weight matrix and multiplies by
that part only, and the ranks exchange just enough to put the result together.
It is how layers too large or too slow for one GPU are spread over several.

In this tutorial you will:

- see, with plain tensors in one process, why a two-layer MLP splits so well;
- describe the ranks as a **device mesh** with
  :func:`~torch.distributed.device_mesh.init_device_mesh`;
- split an MLP over the mesh with
  :func:`~torch.distributed.tensor.parallel.parallelize_module`,
  ``ColwiseParallel`` and ``RowwiseParallel``, and print where every piece of
  every parameter lives;
- check that the split model computes what the single-process model computes,
  forward and backward, and after a few optimizer steps, and count the
  messages it sends;
- see the partial results, a ``Partial`` placement, before they are summed,
  and what happens when the ranks are not given the same input;
- split the activations along the sequence as well (sequence parallelism)
  and compute the loss without gathering the logits (loss parallelism).

It starts its processes as the
:ref:`DDP tutorial <sphx_glr_beginner_ddp_tutorial.py>` does, on any
machine: two processes over ``gloo`` without a GPU, one process per GPU over
``nccl`` with GPUs. The first thing it prints, after a computation in one
process, says which.
"""

######################################################################
# Splitting a matrix product
# --------------------------
#
# An MLP block computes ``down(act(up(x)))``: ``up`` widens each example from
# ``FEATURES`` to ``HIDDEN`` numbers, an activation works on each number
# alone, and ``down`` narrows them back. Take two ranks.
#
# - Split ``up`` by its **output** features: each rank keeps half of the rows
#   of ``up.weight`` (``nn.Linear`` stores a weight as output × input) and
#   computes half of the hidden features, for the whole batch. The activation
#   needs nothing from the other rank, since it works on each feature alone.
# - Split ``down`` by its **input** features: each rank keeps the columns of
#   ``down.weight`` that meet the hidden features it has. Each rank's product
#   is then a partial result of the full output size, and the sum of the two
#   partial results is the output.
#
# So the whole block needs one exchange, a sum across ranks at the end. Here
# it is with plain tensors, in this one process, before any rank is started.

# tutorials-needs: gpus=2
import gc
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Shard
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, SequenceParallel, loss_parallel, parallelize_module

FEATURES, HIDDEN, BATCH = 64, 256, 8


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(FEATURES, HIDDEN)
        self.act = nn.GELU()
        self.down = nn.Linear(HIDDEN, FEATURES)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


def make_model():
    torch.manual_seed(0)
    return MLP()


def make_batch(seed=1):
    return torch.randn(BATCH, FEATURES, generator=torch.Generator().manual_seed(seed))


if __name__ == "__main__":
    model, x = make_model(), make_batch()
    with torch.no_grad():
        partial = []
        for rows in (slice(0, HIDDEN // 2), slice(HIDDEN // 2, HIDDEN)):  # the hidden features of each "rank"
            hidden = model.act(x @ model.up.weight[rows].T + model.up.bias[rows])
            partial.append(hidden @ model.down.weight[:, rows].T)
        by_halves = partial[0] + partial[1] + model.down.bias
        print(f"one partial result: {tuple(partial[0].shape)}, the output: {tuple(by_halves.shape)}")
        print(f"largest difference from the whole model: {(by_halves - model(x)).abs().max().item():.2e}")

######################################################################
# The sum of the halves equals the model's output, up to the rounding of
# adding numbers in another order.
#
# PyTorch names the two ways of splitting after the matrix of a product
# ``x @ W``, where ``W`` is the transpose of what ``nn.Linear`` stores:
# splitting by output features is **column-wise** (``ColwiseParallel``), by
# input features **row-wise** (``RowwiseParallel``).
#
# The processes
# -------------
#
# The start-up code is the DDP tutorial's: ``run_on_ranks(fn)`` starts one
# process per rank, which meet through a ``FileStore`` in a folder of their
# own, each running ``fn`` with ``THREADS`` threads (the cores divided among
# the processes, so that they do not compete for them). ``say`` is its too:
# every rank calls it at the same point, and rank 0 prints every rank's text,
# in rank order, each line tagged with its rank.

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
# The device mesh and the plan
# ----------------------------
#
# A :class:`~torch.distributed.device_mesh.DeviceMesh` arranges the ranks in
# an array, with a name for each dimension. Here it is one-dimensional, a row
# of ``WORLD_SIZE`` ranks named ``"tp"``; larger setups use two dimensions,
# for example tensor parallelism inside each machine and FSDP across them.
#
# ``parallelize_module`` takes the model, the mesh and a **plan**: a
# dictionary from the name of a submodule to the way to split it. It replaces
# the submodule's parameters by DTensors, whose **placement** on the mesh
# says how each is laid out: ``Shard(dim=0)`` cut along dimension 0,
# ``Shard(dim=1)`` along dimension 1, ``Replicate()`` whole on every rank. It
# also wraps the submodules' inputs and outputs, so that the rest of the model
# keeps seeing ordinary tensors.

PLAN = {"up": ColwiseParallel(), "down": RowwiseParallel()}


def parallel_model(rank):
    mesh = init_device_mesh(device_for(rank).type, (WORLD_SIZE,), mesh_dim_names=("tp",))
    return parallelize_module(make_model().to(device_for(rank)), mesh, PLAN), mesh


def show_placements(rank, world_size):
    model, mesh = parallel_model(rank)
    lines = [f"mesh: {mesh.mesh.tolist()}, dimension {mesh.mesh_dim_names}, I am {mesh.get_local_rank('tp')}",
             f"{'parameter':<12}{'whole shape':>12}{'local shape':>13}  placement"]
    for name, p in model.named_parameters():
        lines.append(f"{name:<12}{str(tuple(p.shape)):>12}{str(tuple(p.to_local().shape)):>13}  {p.placements}")
    say("\n".join(lines))


if __name__ == "__main__":
    run_on_ranks(show_placements)

######################################################################
# Each rank holds the rows of ``up`` (and of its bias) that produce its
# hidden features, and the columns of ``down`` that read them. ``down``'s
# bias is replicated: it is added once, after the partial results are summed.
#
# The same results as one process
# -------------------------------
#
# Every rank now runs the whole batch through its part of the model, and
# through a plain copy of the model as well, and compares. A forward hook on
# ``up`` shows what a rank computes in between: its share of the hidden
# features, for every example. ``CommDebugMode`` counts the collectives each
# pass launches.
#
# Backward is checked too: the gradients of the split parameters are
# DTensors with the same placements, and ``full_tensor()`` gathers each one
# whole to compare it with the plain model's. The input asks for its gradient
# as well, as it would if other layers came before the block.
#
# Last, the optimizer. It is built from ``model.parameters()``, DTensors, as
# for any model: each of its operations on a DTensor runs on the rank's own
# piece, so each rank updates, and keeps the optimizer's state for, its own
# part of every weight. Both models take ``STEPS`` steps of ``AdamW``, and
# their parameters are compared.

STEPS = 3


def check_against_one_process(rank, world_size):
    model, _ = parallel_model(rank)
    reference = make_model().to(device_for(rank))
    x = make_batch().to(device_for(rank)).requires_grad_()  # as if layers before the block needed its gradient
    x_reference = x.detach().clone().requires_grad_()
    hidden = []
    model.up.register_forward_hook(lambda module, inputs, output: hidden.append(tuple(output.shape)))
    with CommDebugMode() as forward_comms:
        y = model(x)
    with CommDebugMode() as backward_comms:
        y.sum().backward()
    y_reference = reference(x_reference)
    y_reference.sum().backward()
    grad_gap = max((p.grad.full_tensor() - q.grad).abs().max().item()
                   for p, q in zip(model.parameters(), reference.parameters()))
    counts = [{str(op).split(".")[-1]: n for op, n in comms.get_comm_counts().items()}
              for comms in (forward_comms, backward_comms)]
    for m in (reference, model):
        optimizer = torch.optim.AdamW(m.parameters(), lr=0.01)
        for _ in range(STEPS):
            optimizer.zero_grad()
            m(x.detach()).pow(2).mean().backward()
            optimizer.step()
    step_gap = max((p.full_tensor() - q).abs().max().item() for p, q in zip(model.parameters(), reference.parameters()))
    state = optimizer.state[model.down.weight]["exp_avg"]  # the split model's optimizer: the last one built
    say(f"up's output on this rank: {hidden[0]}; the model's output: {tuple(y.shape)}\n"
        f"largest difference from one process: output {(y - y_reference).abs().max().item():.2e}, "
        f"parameters' gradients {grad_gap:.2e}, input's gradient {(x.grad - x_reference.grad).abs().max().item():.2e}\n"
        f"collectives: forward {counts[0]}, backward {counts[1]}\n"
        f"after {STEPS} AdamW steps, largest difference of the parameters: {step_gap:.2e}\n"
        f"AdamW's exp_avg of down.weight: {state.placements}, here {tuple(state.to_local().shape)}")


if __name__ == "__main__":
    run_on_ranks(check_against_one_process)

######################################################################
# The forward pass makes the single exchange worked out at the top, an
# ``all_reduce`` that sums the partial results. In the backward pass the same
# thing happens in the other direction: the gradient with respect to the
# block's input is a sum of partial results, one per rank. After the
# optimizer steps, the split model's parameters are still those of the plain
# one, up to rounding.
#
# ``Partial``: the sum not yet made
# ---------------------------------
#
# Between the product inside ``down`` and that ``all_reduce``, each rank holds
# its partial result, the full output shape with only its own share of the
# sum. DTensor has a placement for that too: ``Partial()``, a tensor whose
# true value is the sum of the ranks' local tensors. ``RowwiseParallel``
# turns it into ``Replicate()`` (the whole value on every rank) in a forward
# hook of ``down``, and that redistribution is the ``all_reduce``. A forward
# hook registered with ``prepend=True`` runs before it and sees the
# ``Partial`` tensor.
#
# This also shows the one rule of a tensor-parallel group: **every rank must
# be given the same input**. Each rank computes its share of the hidden
# features of the examples it was given, and the sum adds the shares up as if
# they came from the same examples. If the ranks were given different
# batches, as DDP's ranks are, nothing would fail: the sum would mix the
# examples of all ranks, and the output would be wrong. Below, each rank also
# feeds the split model a batch of its own, and compares the output with the
# plain model's on that batch. In two-dimensional setups, the ranks along the
# data-parallel dimension get different batches, and those along the
# tensor-parallel dimension the same one.


def partial_and_inputs(rank, world_size):
    model, _ = parallel_model(rank)
    reference = make_model().to(device_for(rank))
    before_sum = []
    model.down.register_forward_hook(lambda module, inputs, output: before_sum.append(output), prepend=True)
    x = make_batch().to(device_for(rank))
    y = model(x)
    partial = before_sum[0]
    own = make_batch(seed=10 + rank).to(device_for(rank))  # a different batch on every rank
    expected = reference(own)
    wrong = (model(own) - expected).abs().max().item()
    say(f"down's output before its hook: a {type(partial).__name__}, placements {partial.placements}\n"
        f"  my partial result, first values: {[round(v, 4) for v in partial.to_local()[0, :3].tolist()]}\n"
        f"  the output (the sum), first values: {[round(v, 4) for v in y[0, :3].tolist()]}\n"
        f"with a batch of my own: largest difference from one process {wrong:.2e}, "
        f"largest output {expected.abs().max().item():.2e}")


if __name__ == "__main__":
    run_on_ranks(partial_and_inputs)

######################################################################
# Each rank's partial result is different, and only their sum is the output.
# With a batch of each rank's own, the difference from the plain model is of
# the order of the outputs themselves, where it was a rounding error before,
# and nothing warned.
#
# Sequence parallelism and loss parallelism
# -----------------------------------------
#
# In a transformer, the MLP and attention blocks are split as above, but
# some layers between them work on each position of the sequence alone:
# normalization (``LayerNorm``, ``RMSNorm``) and dropout. With plain tensor
# parallelism each rank runs them on the whole, replicated activations.
# ``SequenceParallel`` splits them along the **sequence** instead: each rank
# normalizes its own positions, and keeps only those activations. The
# ``all_reduce`` at the end of a block then becomes a **reduce-scatter**
# (summed, and each rank keeps its positions), and an **all-gather** collects
# the positions back before the next column-wise layer. The same amount of data
# travels; the memory of those activations is divided by the number of ranks.
#
# At the very end, the output layer of a language model produces a score for
# every word of the vocabulary, at every position: often the largest
# activation of all. Split column-wise with ``use_local_output=False``, it
# stays a DTensor sharded along the vocabulary, and inside
# ``with loss_parallel():``, ``cross_entropy`` computes the loss (and its
# backward pass) from the shards, exchanging only a few numbers per position,
# without gathering the scores whole.
#
# Below, a small block (a ``LayerNorm``, the MLP, and an output layer of
# ``VOCAB`` scores) is split that way. Each rank passes in its own part of the
# sequence, as the earlier layers of a sequence-parallel model would hand it
# over; the loss is compared with the plain block's on the whole sequence.

SEQUENCE, VOCAB = 6, 32


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(FEATURES)
        self.mlp = MLP()
        self.output = nn.Linear(FEATURES, VOCAB)

    def forward(self, x):
        return self.output(self.mlp(self.norm(x)))


def make_block():
    torch.manual_seed(0)
    return Block()


def sequence_and_loss_parallel(rank, world_size):
    device = device_for(rank)
    mesh = init_device_mesh(device.type, (world_size,), mesh_dim_names=("tp",))
    plan = {"norm": SequenceParallel(),  # each rank: its own positions (dimension 1)
            "mlp.up": ColwiseParallel(input_layouts=Shard(1)),  # all-gather the positions first
            "mlp.down": RowwiseParallel(output_layouts=Shard(1)),  # reduce-scatter: each rank, its positions
            "output": ColwiseParallel(input_layouts=Shard(1), use_local_output=False)}  # scores stay sharded
    block = parallelize_module(make_block().to(device), mesh, plan)
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(BATCH, SEQUENCE, FEATURES, generator=generator).to(device)
    targets = torch.randint(0, VOCAB, (BATCH, SEQUENCE), generator=generator).to(device)
    per_rank = SEQUENCE // world_size
    mine = x[:, rank * per_rank:(rank + 1) * per_rank].clone().requires_grad_()
    with CommDebugMode() as comms:
        scores = block(mine)
        with loss_parallel():
            loss = nn.functional.cross_entropy(scores.flatten(0, 1), targets.flatten())
            loss.backward()
    plain = nn.functional.cross_entropy(make_block().to(device)(x).flatten(0, 1), targets.flatten())
    counts = {str(op).split(".")[-1]: n for op, n in comms.get_comm_counts().items()}
    loss = loss.full_tensor() if isinstance(loss, DTensor) else loss
    say(f"my part of the sequence: {tuple(mine.shape)}\n"
        f"scores: {type(scores).__name__} {tuple(scores.shape)}, {scores.placements}, here {tuple(scores.to_local().shape)}\n"
        f"loss {loss.item():.6f}, plain block {plain.item():.6f}\n"
        f"collectives, forward and backward: {counts}")


if __name__ == "__main__":
    run_on_ranks(sequence_and_loss_parallel)

######################################################################
# Each rank held the scores of only its share of the vocabulary, and the loss
# is the plain block's, up to rounding. The collectives are all-gathers and
# reduce-scatters now, in both passes, and the few that ``loss_parallel``
# adds for the loss.
#
# What the split costs
# --------------------
#
# Each rank multiplied by its own slice of each weight matrix, so on GPUs the
# work of the block is divided among the ranks. The price is an exchange of
# activations in every block, in each direction, on the critical path: the
# next layer cannot start before it. It is worth paying where the ranks are
# linked fast, the GPUs of one machine, and that is where tensor parallelism
# is usually used, with FSDP or pipeline parallelism across machines.
#
# Where to go next
# ----------------
#
# - :ref:`Saving and loading sharded models <sphx_glr_beginner_parallel_4_dcp_tutorial.py>`
#   saves a sharded model and loads it back into a tensor-parallel layout.
# - `Tensor parallelism API reference
#   <https://pytorch.org/docs/stable/distributed.tensor.parallel.html>`_
# - `DeviceMesh and DTensor <https://pytorch.org/docs/stable/distributed.tensor.html>`_
