"""
Figures and their alt texts
===========================

Untitled and titled figures, two figures from one block, a deferred figure.
"""

# sphinx_gallery_thumbnail_number = 2
# sphinx_gallery_line_numbers = True
import matplotlib.pyplot as plt

# %%
# A figure without any title.
fig, ax = plt.subplots(figsize=(4, 3))
ax.plot([0, 1, 2], [0, 1, 4])

# %%
# A figure titled with ``suptitle``, in another size: it is the thumbnail.
fig, ax = plt.subplots(figsize=(5, 2))
fig.suptitle("Squares and cubes")
ax.plot([0, 1, 2], [0, 1, 8], color="tab:red")

# %%
# Two figures from one block, titled through their axes.
for side, colour in (("Left panel", "tab:green"), ("Right panel", "tab:purple")):
    fig, ax = plt.subplots(figsize=(3, 3))
    ax.set_title(side)
    ax.bar([1, 2, 3], [3, 1, 2], color=colour)
print("two figures drawn")

# %%
# Hidden setup: the ignore markers and what is between them are not shown.

# sphinx_gallery_start_ignore
hidden_offset = 3
print("printed from a hidden line")
# sphinx_gallery_end_ignore
values = [v + hidden_offset for v in range(4)]
print(values)

# %%
# A figure started here is only shown after the next block.
fig, ax = plt.subplots(figsize=(4, 2))
ax.plot(values, marker="o")
# sphinx_gallery_defer_figures

# %%
# The deferred figure gets its title here, and is shown after this block.
ax.set_title("Finished later")
