"""
Importing a helper module
=========================

``parity_helper.py`` sits beside this example, gets no page of its own
(``ignore_pattern``), and can be imported.
"""

import parity_helper

print(parity_helper.greeting())

# %%
# A flag for the project's own image scraper (``parity_scraper.scrape``): where the
# scraper is configured, it draws a swatch of this size after this block.
parity_swatch = (48, 32)
print("swatch requested")
