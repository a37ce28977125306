"""A run's writes, watched by a test."""

from __future__ import annotations

from bloge.store import StoreWriter


class ProbedWriter(StoreWriter):
    """A store's writer whose ``write`` a test replaces with a probe around it (this
    subclass has a ``__dict__`` for the probe, where :class:`StoreWriter` has slots)."""
