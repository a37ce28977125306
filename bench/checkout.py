"""The environment of a bench's child process that runs a checkout's code.

A checkout holds three packages: ``bloge`` at its root, ``bloge_config`` under ``config/`` and
``bloge_container`` under ``container/``. With the root alone on ``PYTHONPATH``, a child would
take the other two from wherever the venv installed them (often another checkout), and a bench
of this tree's server or settings code would measure that one instead.
"""

from __future__ import annotations

import os
from pathlib import Path

#: This tree's root.
ROOT = Path(__file__).resolve().parent.parent


def pythonpath(root: Path = ROOT, *more: Path) -> str:
    """``root``'s three source folders, then ``more``, as a ``PYTHONPATH`` value."""
    return os.pathsep.join(str(p) for p in (root, root / "config", root / "container", *more))


def child_env(root: Path = ROOT, *more: Path) -> dict[str, str]:
    """This process's environment, with :func:`pythonpath` of ``root`` and ``more``."""
    return {**os.environ, "PYTHONPATH": pythonpath(root, *more)}
