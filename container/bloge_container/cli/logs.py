"""bloge's log lines on a terminal (loaded by ``bloge`` before any command, so it loads no
more than :mod:`logging`)."""

from __future__ import annotations

import logging
import sys


class _Warnings(logging.Formatter):
    """bloge's log lines on a terminal: a warning is one line, ``warning: …``, ending with the
    error that caused it (its type and message, not its traceback); errors keep their
    traceback, for they are bugs to report."""

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno >= logging.ERROR:
            return super().format(record)
        line = f"{record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            line += f": {type(error).__name__}: {error}"
        return line


def log_to_stderr() -> None:
    """Send bloge's warnings and errors to stderr (without it, Python prints a warning's whole
    traceback). ``bloge serve`` adds uvicorn's logging beside it."""
    logger = logging.getLogger("bloge")
    if logger.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Warnings("%(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
