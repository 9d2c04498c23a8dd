"""
An example that fails on purpose
================================

Listed in ``expected_failing_examples``; with ``sphinx_gallery_failing_thumbnail
= False`` its thumbnail is its figure, not the "broken" image.
"""

# sphinx_gallery_failing_thumbnail = False
import matplotlib.pyplot as plt

# %%
# This block works.
fig, ax = plt.subplots(figsize=(3, 2))
ax.plot([1, 3, 2])
print("before the failure")

# %%
# This one raises.
raise ValueError("this example fails on purpose")
