"""`python -m tutorials_site <command>`: what the Makefile's targets run."""

from .commands.cli import main

main()
