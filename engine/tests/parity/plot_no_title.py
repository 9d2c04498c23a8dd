"""
A script without a heading, whose first paragraph sphinx-gallery takes as its title.

Its second paragraph is the intro the gallery shows.
"""

print("a script without a heading ran")

# %%
# A text block, still without a heading.
print("its second block ran")
