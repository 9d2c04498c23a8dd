"""A module the examples import; ``ignore_pattern`` keeps it from getting a page."""

GREETING = "the helper module was imported"


def greeting() -> str:
    """The text an example prints to show that the import worked."""
    return GREETING.upper()
