"""Every op a recorder can write has its writes: a table of statements or a script."""

from __future__ import annotations

from typing import get_args

from bloge.store import ops
from bloge.store.sql import writes

#: The ops whose writes read first, or are written by another module (``writes._apply``).
SCRIPTED = {ops.AppendRunEvents, ops.AwaitCalls, ops.PauseRun, ops.HandOver, ops.KeepRunTools,
            ops.SettleSpend}


def test_every_op_is_written_one_way() -> None:
    tabled = set(writes.STATEMENTS)
    assert not tabled & SCRIPTED
    assert tabled | SCRIPTED == set(get_args(ops.Op))
