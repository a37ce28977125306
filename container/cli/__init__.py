"""The ``bloge`` command line."""

from container.cli.app import app, main

__all__ = ["app", "main"]
