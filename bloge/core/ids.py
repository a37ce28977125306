"""``new_id()``: the one maker of ids — of runs, threads, executions, proposals, tokens."""

from __future__ import annotations

import uuid


def new_id() -> str:
    """A new random id: 32 lowercase hex digits (a version 4 UUID's), unique without asking
    anyone, so that any process may name a run or a thread before the store has it. Code
    inside a Temporal workflow takes ``workflow.uuid4()`` instead (it must replay alike)."""
    return uuid.uuid4().hex
