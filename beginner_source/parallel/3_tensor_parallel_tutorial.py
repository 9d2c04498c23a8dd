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
  forward and backward, and count the messages it sends.

It starts its processes as the
:ref:`DDP tutorial <sphx_glr_beginner_ddp_tutorial.py>` does. Everything below
ran when the site was built: on a machine without a GPU, two processes that
talk over ``gloo``; on a GPU machine, one process per GPU over ``nccl``. The
line under this introduction says which.
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
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

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


def make_batch():
    return torch.randn(BATCH, FEATURES, generator=torch.Generator().manual_seed(1))


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
# The code that starts the processes is the DDP tutorial's, and ``say`` is
# the FSDP2 tutorial's: every rank calls it at the same point, and rank 0
# prints every rank's text in rank order, each line tagged with its rank.

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


def say(text):
    """Every rank calls this with its own text; rank 0 prints all of them, in rank order, each line tagged."""
    texts = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(text, texts, dst=0)
    if texts is not None:
        for rank, said in enumerate(texts):
            for line in said.splitlines():
                print(f"[rank {rank}] {line}", flush=True)


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
# features, for every example. ``CommDebugMode`` counts the collectives each pass
# launches.
#
# Backward is checked too: the gradients of the split parameters are
# DTensors with the same placements, and ``full_tensor()`` gathers each one
# whole to compare it with the plain model's. The input asks for its gradient
# as well, as it would if other layers came before the block.


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
    say(f"up's output on this rank: {hidden[0]}; the model's output: {tuple(y.shape)}\n"
        f"largest difference from one process: output {(y - y_reference).abs().max().item():.2e}, "
        f"parameters' gradients {grad_gap:.2e}, input's gradient {(x.grad - x_reference.grad).abs().max().item():.2e}\n"
        f"collectives: forward {counts[0]}, backward {counts[1]}")


if __name__ == "__main__":
    run_on_ranks(check_against_one_process)

######################################################################
# The forward pass makes the single exchange worked out at the top, an
# ``all_reduce`` that sums the partial results. In the backward pass the same
# thing happens in the other direction: the gradient with respect to the
# block's input is a sum of partial results, one per rank.
#
# Each rank multiplied by its own slice of each weight matrix, so on GPUs the
# work of the block is divided among the ranks. The price is one ``all_reduce`` of the activations per
# block, in each direction: it is worth paying where the ranks are linked
# fast, the GPUs of one machine, and that is where tensor parallelism is
# usually used.
#
# Where to go next
# ----------------
#
# - :ref:`Sharding a model with FSDP2 <sphx_glr_beginner_parallel_1_fsdp2_tutorial.py>`
#   divides the storage of the whole model; the two combine on a
#   two-dimensional mesh.
# - `Tensor parallelism API reference
#   <https://pytorch.org/docs/stable/distributed.tensor.parallel.html>`_
# - `DeviceMesh and DTensor <https://pytorch.org/docs/stable/distributed.tensor.html>`_
