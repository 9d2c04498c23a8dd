"""
A thumbnail from a file
=======================

The thumbnail is an image file named by ``sphinx_gallery_thumbnail_path``
(relative to the folder of conf.py), not a figure of the example.
"""

# sphinx_gallery_thumbnail_path = "parity_source/parity_thumb.png"
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(3, 3))
ax.plot([3, 2, 1])
