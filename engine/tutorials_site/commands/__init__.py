"""The commands behind the Makefile's targets; `cli` is their one entry."""
