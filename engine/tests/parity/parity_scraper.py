"""An image scraper of the project's own, configured by the import path ``parity_scraper.scrape``.

After each block it looks for a ``parity_swatch = (width, height)`` variable in the
example's globals and, when it finds one, writes a flat-coloured PNG of that size.
"""

from PIL import Image
from sphinx_gallery.scrapers import figure_rst


def scrape(block, block_vars: dict, gallery_conf: dict) -> str:
    """Write the requested swatch (once) to the next image path; return its reST."""
    size = block_vars["example_globals"].pop("parity_swatch", None)
    if size is None:
        return ""
    path = next(block_vars["image_path_iterator"])
    Image.new("RGB", tuple(size), (30, 110, 190)).save(path)
    return figure_rst([path], gallery_conf["src_dir"], "Blue swatch")
