"""The errors library code raises; only the command entry turns them into exit statuses."""


class SiteError(Exception):
    """Bad input or a refused operation: the message names the file (and line) and what to do."""


class UsageError(SiteError):
    """A make variable or command argument that cannot be used."""


class Failed(SiteError):
    """A command whose checks or builds failed; the details were printed above, the message sums up."""
