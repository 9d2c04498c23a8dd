"""
Single images and the last thumbnail
====================================

``sphinx_gallery_multi_image = "single"`` shows a block's figures one per line;
the thumbnail is the last figure.
"""

# sphinx_gallery_multi_image = "single"
# sphinx_gallery_thumbnail_number = -1
import matplotlib.pyplot as plt

# %%
# Two figures from one block.
for width in (2, 3):
    fig, ax = plt.subplots(figsize=(width, 2))
    ax.set_title(f"Width {width}")
    ax.plot(range(width + 1))

# %%
# The last figure: the thumbnail.
fig, ax = plt.subplots(figsize=(3, 4))
ax.scatter([1, 2, 3], [3, 1, 2])
