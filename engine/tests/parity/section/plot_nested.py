"""
An example in a section
=======================

This script lives in a subfolder of the gallery.
"""

import matplotlib.pyplot as plt

print("hello from the section")

# %%
# One titled figure.
fig, ax = plt.subplots(figsize=(3, 2))
fig.suptitle("Nested figure")
ax.plot([0, 2, 1])
