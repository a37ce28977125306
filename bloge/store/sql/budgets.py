"""Scripts of the shared budgets: atomic reservations, settlements and usage records.

A reservation locks the rows of its claims — an upsert each (``INSERT … ON CONFLICT DO
UPDATE … RETURNING``, which makes a new row and reads it, and takes its lock on PostgreSQL;
on SQLite the write transaction's ``BEGIN IMMEDIATE`` holds it) — in one order (scope, key,
period), so that two workers reserving on one thread wait for each other rather than
deadlock; it judges the step against what the rows hold and adds the step to every row, or
to none. A model
call's settlement, which can only lower what its reservation counted, is written with the
run's next batch (:class:`~bloge.store.ops.SettleSpend`), with its usage row: no transaction
of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bloge.agent.runtime import Claim, Refusal, Spend, calls_that_fit, refusal
from bloge.store.sql.script import Query, Script, one

if TYPE_CHECKING:
    from bloge.store.ops import SettleSpend

_COLUMNS = "input_tokens, output_tokens, usd, model_calls, tool_calls"


def _ordered(claims: Sequence[Claim]) -> list[Claim]:
    return sorted(claims, key=lambda c: (c.scope, c.key, c.period))


def _locked(claims: Sequence[Claim], now: float) -> Script[list[Spend]]:
    """What each claim's row holds (made when new), the rows locked until the transaction
    ends: one statement a row, an upsert whose update changes nothing but takes the lock."""
    held: list[Spend] = []
    for claim in claims:
        row = one((yield Query(
            "INSERT INTO bloge_budget_spend (scope, key, period, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (scope, key, period) DO UPDATE SET "
            f"updated_at = bloge_budget_spend.updated_at RETURNING {_COLUMNS}",
            (claim.scope, claim.key, claim.period, now))))
        assert row is not None
        held.append(Spend(int(row[0]), int(row[1]), float(row[2]), int(row[3]), int(row[4])))
    return held


def _add(claim: Claim, spend: Spend, now: float) -> Query:
    return Query("UPDATE bloge_budget_spend SET input_tokens = input_tokens + ?, "
                 "output_tokens = output_tokens + ?, usd = usd + ?, "
                 "model_calls = model_calls + ?, tool_calls = tool_calls + ?, updated_at = ? "
                 "WHERE scope = ? AND key = ? AND period = ?",
                 (spend.input_tokens, spend.output_tokens, spend.usd, spend.model_calls,
                  spend.tool_calls, now, claim.scope, claim.key, claim.period))


def reserve(claims: Sequence[Claim], need: Spend, *, now: float) -> Script[Refusal | None]:
    """Reserve ``need`` under every claim, or under none and say which refused."""
    ordered = _ordered(claims)
    held = yield from _locked(ordered, now)
    for claim, used in zip(ordered, held, strict=True):
        refused = refusal(claim.scope, claim.budget, used, need)
        if refused is not None:
            return refused
    for claim in ordered:
        yield _add(claim, need, now)
    return None


def reserve_tool_calls(claims: Sequence[Claim], wanted: int, *, now: float) -> Script[int]:
    """Reserve as many of ``wanted`` tool calls as every claim allows; return how many."""
    ordered = _ordered(claims)
    held = yield from _locked(ordered, now)
    fit = min((calls_that_fit(claim.budget, used, wanted)
               for claim, used in zip(ordered, held, strict=True)), default=wanted)
    if fit:
        for claim in ordered:
            yield _add(claim, Spend(tool_calls=fit), now)
    return fit


def settled(op: SettleSpend) -> Script[None]:
    """A model call's settlement (see :class:`~bloge.store.ops.SettleSpend`)."""
    for claim in _ordered(op.claims):
        yield _add(claim, op.difference, op.at)
    row = op.usage
    if row is None:
        return
    call, spent = row.call, row.call.spent
    yield Query("INSERT INTO bloge_usage (run_id, turn, thread_id, agent_id, principal, model, "
                "at, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, usd, "
                "reported) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row.run_id, call.turn, row.thread_id, row.agent_id, row.principal, call.model,
                 op.at, spent.input_tokens, spent.output_tokens, call.cache_read_tokens,
                 call.cache_write_tokens, spent.usd, int(call.reported)))


#: What ``bloge usage`` groups by, and the column of each.
GROUPS = {"agent": "agent_id", "key": "principal", "model": "model", "thread": "thread_id"}


def usage_totals(by: str, since: float | None) -> Script[list[tuple[Any, ...]]]:
    """Model calls, tokens and dollars since ``since`` (epoch seconds), grouped ``by``."""
    column = GROUPS[by]
    where, params = ("WHERE at >= ?", (since,)) if since is not None else ("", ())
    result = yield Query(
        f"SELECT {column}, COUNT(*), SUM(input_tokens), SUM(output_tokens), "
        f"SUM(cache_read_tokens), SUM(cache_write_tokens), SUM(usd), "
        f"SUM(1 - reported) FROM bloge_usage {where} GROUP BY {column} ORDER BY SUM(usd) DESC, "
        f"{column}", params)
    return result.rows


def budget_spend(scope: str, key: str, period: str) -> Script[Spend | None]:
    """What a shared budget has spent and reserved, if anything."""
    row = one((yield Query(f"SELECT {_COLUMNS} FROM bloge_budget_spend "
                           "WHERE scope = ? AND key = ? AND period = ?", (scope, key, period))))
    if row is None:
        return None
    return Spend(int(row[0]), int(row[1]), float(row[2]), int(row[3]), int(row[4]))


def prune(*, before: float) -> Script[None]:
    """Delete the usage of model calls before ``before``, the counters of API keys' periods
    untouched since then, and those of threads the store no longer has."""
    yield Query("DELETE FROM bloge_usage WHERE at < ?", (before,))
    yield Query("DELETE FROM bloge_budget_spend WHERE scope = 'key' AND updated_at < ?",
                (before,))
    yield Query("DELETE FROM bloge_budget_spend WHERE scope = 'thread' AND NOT EXISTS "
                "(SELECT 1 FROM bloge_threads t WHERE t.id = bloge_budget_spend.key)")
