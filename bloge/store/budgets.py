"""Budgets shared beyond one run, kept in the store: :class:`StoreCounters`, the
:class:`~bloge.agent.runtime.BudgetCounters` of a recorded run, and :func:`usage_report`,
what ``bloge usage`` reads.

Every worker on one database sees the same counters: a reservation is one transaction that
locks the rows it judges (see :mod:`bloge.store.sql.budgets`), so two workers can never both
take the last of a thread's or a key's budget.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from bloge.agent.runtime import CallUsage, Claim, Refusal, Spend
from bloge.store.ops import SettleSpend, UsageRow
from bloge.store.recorder import Recorder
from bloge.store.sql import budgets as scripts
from bloge.store.store import Store


class StoreCounters:
    """The shared budgets of the run ``recorder`` records (of agent ``agent_id``, for
    ``principal``) in its store; it also records each of the run's model calls. Reservations
    are transactions of their own; settlements go with the recorder's next batch."""

    __slots__ = ("agent_id", "principal", "recorder")

    def __init__(self, recorder: Recorder, *, agent_id: str, principal: str | None) -> None:
        self.recorder = recorder
        self.agent_id = agent_id
        self.principal = principal

    def __repr__(self) -> str:
        return f"StoreCounters(run_id={self.recorder.run_id!r})"

    async def reserve(self, claims: Sequence[Claim], need: Spend) -> Refusal | None:
        store = self.recorder.store
        return await store.run_script(scripts.reserve(claims, need, now=time.time()),
                                      write=True)

    async def reserve_tool_calls(self, claims: Sequence[Claim], wanted: int) -> int:
        store = self.recorder.store
        return await store.run_script(scripts.reserve_tool_calls(claims, wanted, now=time.time()),
                                      write=True)

    async def settle(self, claims: Sequence[Claim], reserved: Spend, call: CallUsage) -> None:
        recorder = self.recorder
        row = UsageRow(recorder.run_id, recorder.thread_id, self.agent_id, self.principal, call)
        recorder.keep(SettleSpend(tuple(claims), call.spent.minus(reserved), row, time.time()))

    async def release(self, claims: Sequence[Claim], reserved: Spend) -> None:
        self.recorder.keep(SettleSpend(tuple(claims), Spend().minus(reserved), None,
                                       time.time()))


@dataclass(frozen=True, slots=True)
class UsageLine:
    """Model calls grouped by one agent, key, model or thread (``group``; ``None``: calls
    that have none, e.g. without an API key)."""

    group: str | None
    model_calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    usd: float
    unreported_calls: int

    def to_dict(self) -> dict[str, object]:
        return {"group": self.group, "model_calls": self.model_calls,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_read_tokens": self.cache_read_tokens,
                "cache_write_tokens": self.cache_write_tokens, "usd": round(self.usd, 6),
                "unreported_calls": self.unreported_calls}


#: What :func:`usage_report` groups by.
USAGE_GROUPS = tuple(scripts.GROUPS)


async def usage_report(store: Store, *, by: str = "agent",
                       since: float | None = None) -> list[UsageLine]:
    """The store's model calls since ``since`` (epoch seconds; ``None``: all), grouped
    ``by`` ``"agent"``, ``"key"``, ``"model"`` or ``"thread"``, the costliest first."""
    if by not in scripts.GROUPS:
        raise ValueError(f"usage is grouped by one of {', '.join(USAGE_GROUPS)}, not {by!r}")
    rows = await store.run_script(scripts.usage_totals(by, since))
    return [UsageLine(None if row[0] is None else str(row[0]), int(row[1]), int(row[2] or 0),
                      int(row[3] or 0), int(row[4] or 0), int(row[5] or 0), float(row[6] or 0),
                      int(row[7] or 0)) for row in rows]


async def budget_spent(store: Store, scope: str, key: str, period: str = "") -> Spend | None:
    """What the shared budget ``scope``/``key``/``period`` has spent and reserved so far."""
    return await store.run_script(scripts.budget_spend(scope, key, period))
