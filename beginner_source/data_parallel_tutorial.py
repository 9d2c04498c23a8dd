"""
Optional: Data Parallelism
==========================

A single machine often has more than one GPU. :class:`torch.nn.DataParallel`
is the quickest way to let one model use all of them: you wrap the model once,
and every forward pass after that is spread over the visible GPUs.

In this tutorial you will:

- put a model and its input tensors on a device with ``.to(device)``;
- wrap the model in ``nn.DataParallel`` when more than one GPU is visible;
- see how each batch is split between the GPUs;
- learn when ``DistributedDataParallel`` is the better choice.

The script runs unchanged on a CPU, on one GPU and on several GPUs. The output
shown on this page was captured when the site was built; the note above the
first section says on which hardware.
"""

######################################################################
# Devices and ``.to()``
# ---------------------
#
# PyTorch keeps every tensor and every parameter on one device. You choose
# the device once and move things there with ``.to(device)``:
#
# .. code-block:: python
#
#    device = torch.device("cuda:0")
#    model.to(device)
#
# The two kinds of object behave differently:
#
# - ``module.to(device)`` moves the module's parameters and buffers **in
#   place** and returns the same module, so the return value may be ignored.
# - ``tensor.to(device)`` **does not move the tensor**. It returns a tensor on
#   the target device (a copy, unless the tensor is already there) and leaves
#   the original where it was. Keep the result:
#
# .. code-block:: python
#
#    batch = batch.to(device)
#
# Imports and parameters
# ----------------------

# tutorials-needs: gpus=2
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

# Sizes of the toy problem.
input_size = 5
output_size = 2

batch_size = 30
data_size = 100

######################################################################
# Pick the device. Without a GPU, everything below runs on the CPU.

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
print(f"Running on {device} with {torch.cuda.device_count()} visible GPU(s)")

cpu_tensor = torch.zeros(3)
moved = cpu_tensor.to(device)
print(f"original tensor on {cpu_tensor.device}, result of .to() on {moved.device}")

######################################################################
# A dummy dataset
# ---------------
#
# The data does not matter here, only its shape: a dataset of random
# vectors of length ``input_size``.


class RandomDataset(Dataset):
    def __init__(self, size, length):
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return self.len


rand_loader = DataLoader(
    dataset=RandomDataset(input_size, data_size),
    batch_size=batch_size,
    shuffle=True,
)

######################################################################
# A model that reports its input
# ------------------------------
#
# One linear layer is enough. Its ``forward`` prints the size of the
# tensors it receives and returns, so the output shows the share of the
# batch that each copy of the model works on.
#
# ``DataParallel`` works with any module: a real network would take the place
# of this one without other changes.


class Model(nn.Module):
    def __init__(self, input_size, output_size):
        super().__init__()
        self.fc = nn.Linear(input_size, output_size)

    def forward(self, input):
        output = self.fc(input)
        print("\tIn Model: input size", input.size(), "output size", output.size())
        return output


######################################################################
# Wrap the model in ``DataParallel``
# ----------------------------------
#
# With two or more GPUs, ``nn.DataParallel`` wraps the model. On every
# forward pass the wrapper:
#
# 1. splits the input batch along its first dimension, one piece per GPU;
# 2. copies the model to each GPU;
# 3. runs the copies side by side, one thread each;
# 4. gathers the outputs on the first GPU, in the original order.
#
# With one GPU or none there is nothing to split, so the model is used as it
# is.

model = Model(input_size, output_size)
if torch.cuda.device_count() > 1:
    print(f"Using {torch.cuda.device_count()} GPUs with nn.DataParallel")
    model = nn.DataParallel(model)

model.to(device)
print(f"Model parameters on {next(model.parameters()).device}")

######################################################################
# Run the model
# -------------
#
# The loop looks exactly as it would without ``DataParallel``: move each
# batch to the device, call the model, use the output.

for data in rand_loader:
    input = data.to(device)
    output = model(input)
    print("Outside: input size", input.size(), "output_size", output.size())

######################################################################
# On a machine with one GPU or none, every batch reaches the model whole:
# one "In Model" line for every "Outside" line. The last batch is smaller,
# because ``data_size`` is not a multiple of ``batch_size``.
#
# What several GPUs print
# -----------------------
#
# ``DataParallel`` splits a batch with the same rule as
# :meth:`torch.Tensor.chunk` along dimension 0: every piece gets the batch
# size divided by the number of GPUs, rounded up, and the last piece gets
# what is left. When the batch is small, some GPUs get nothing and sit idle
# for that step.
#
# The cell below applies that rule to the batches of the loop above and
# prints what the run would show with 2, 3 and 8 GPUs. On real GPUs the
# "In Model" lines of one step may come out in any order, because the
# replicas run in parallel threads.

batch_sizes = [len(batch) for batch in torch.arange(data_size).split(batch_size)]


def replica_batch_sizes(batch, num_gpus):
    """Sizes of the pieces that ``DataParallel`` gives to each GPU."""
    return [len(piece) for piece in torch.arange(batch).chunk(num_gpus)]


for num_gpus in (2, 3, 8):
    print(f"--- {num_gpus} GPUs ---")
    for batch in batch_sizes:
        pieces = replica_batch_sizes(batch, num_gpus)
        for piece in pieces:
            print(
                "\tIn Model: input size",
                torch.Size([piece, input_size]),
                "output size",
                torch.Size([piece, output_size]),
            )
        print(
            "Outside: input size",
            torch.Size([batch, input_size]),
            "output_size",
            torch.Size([batch, output_size]),
        )
        if len(pieces) < num_gpus:
            print(f"  ({num_gpus - len(pieces)} of {num_gpus} GPUs idle for this batch)")

######################################################################
# The same rule for 1 to 8 GPUs, for a full batch and for the last one.
# Each bar is one GPU's share.

fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
for ax, batch in zip(axes, (batch_sizes[0], batch_sizes[-1])):
    for num_gpus in range(1, 9):
        bottom = 0
        for rank, piece in enumerate(replica_batch_sizes(batch, num_gpus)):
            ax.bar(num_gpus, piece, bottom=bottom, color=f"C{rank}", edgecolor="white")
            bottom += piece
    ax.set_title(f"batch of {batch}")
    ax.set_xlabel("number of GPUs")
    ax.set_xticks(range(1, 9))
axes[0].set_ylabel("samples per GPU (stacked)")
fig.tight_layout()
plt.show()

######################################################################
# When to use ``DistributedDataParallel`` instead
# -----------------------------------------------
#
# ``DataParallel`` is convenient: one process, one line of code. Its design
# also limits how fast it can go:
#
# - **One process drives every GPU.** The replicas run as Python threads, so
#   they compete for the global interpreter lock, and the first GPU does extra
#   work scattering inputs and gathering outputs.
# - **The model is copied on every step.** Each forward pass replicates the
#   parameters from the first GPU to the others before any work starts.
# - **One machine only.** It cannot span several hosts.
#
# :class:`torch.nn.parallel.DistributedDataParallel` (DDP) runs one process
# per GPU. Each process keeps its own copy of the model for the whole run,
# reads its own part of the data, and only the gradients travel between GPUs,
# overlapped with the backward pass. It is faster even on a single machine,
# and it scales to many machines. PyTorch recommends it for any serious
# multi-GPU training.
#
# Read more:
#
# - `Use DistributedDataParallel instead of DataParallel
#   <https://pytorch.org/docs/stable/notes/cuda.html#cuda-nn-ddp-instead>`_
#   (PyTorch's CUDA semantics notes)
# - `DistributedDataParallel API reference
#   <https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html>`_
# - :ref:`Getting started with DistributedDataParallel <sphx_glr_beginner_ddp_tutorial.py>`,
#   the next tutorial on this site, executed like this one
#
# Summary
# -------
#
# ``nn.DataParallel`` splits each batch along its first dimension, runs a copy
# of the model on every GPU and gathers the results, without any change to
# the model or the training loop. Reach for ``DistributedDataParallel`` when
# speed matters or when one machine is not enough.
