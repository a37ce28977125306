"""The ``bloge`` command line."""

from bloge_container.cli.app import app, main

__all__ = ["app", "main"]
