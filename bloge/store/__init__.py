"""``bloge.store``: durable threads and runs.

```python
from bloge.store import open_store

store = open_store("sqlite:///var/bloge.db")      # or memory://, postgresql://…
agent = AgentLoopOperator("support", definition, registry, store=store)
output = await agent.aexecute("Hello", thread_id="customer-42")
output.run_id, output.thread_id
await agent.aresume_run(output.run_id)                  # e.g. after a crash
```

A thread's messages are an append-only log; a run's turns leave checkpoints that refer to
message numbers, so storage grows linearly with the conversation; every tool call is in a
ledger, so that a run resumed after a crash does not run a completed call again. SQLite is
the default (one file, WAL); PostgreSQL serves several workers. The agent loop itself knows
nothing of the store: a recorder plugs into it from above. The :class:`Store` reads;
:class:`RecordedRuns` runs agents on it (what an operator given ``store=`` uses), writing
through a :class:`RunWriter`. A run whose tool round waits (for approval, or for results
posted from outside) is stored paused; :func:`decide_call` and :func:`post_tool_results`
answer its calls, :func:`pending_approvals` lists them (:func:`round_calls`: every call of
its round, decided or not; :func:`posted_results`: the results posted for them),
:func:`find_paused_run` finds the run by its calls; :func:`run_to_continue` names the run to
resume once they are answered (a sub-agent's paused run goes on inside its caller's).
"""

from bloge.store.approvals import (
    AnswerWaits,
    ApprovalConflictError,
    ApprovalForbiddenError,
    Decided,
    answer_waits,
    decide_call,
    expired_runs,
    find_paused_run,
    pending_approvals,
    post_tool_results,
    posted_results,
    round_calls,
    run_to_continue,
    waiting_counts,
)
from bloge.store.breakers import StoreBreakerStates
from bloge.store.budgets import (
    USAGE_GROUPS,
    StoreCounters,
    UsageLine,
    budget_spent,
    usage_report,
)
from bloge.store.errors import StoreError, StoreNotFoundError, ThreadBusyError
from bloge.store.events import event_chunk
from bloge.store.follow import follow
from bloge.store.records import (
    PendingApproval,
    Run,
    RunError,
    RunEvent,
    RunStatus,
    StoredMessage,
    Thread,
    ToolCallRecord,
    TurnCheckpoint,
)

# Importing it registers how an operator given store=Store records its runs: keep it eager.
from bloge.store.runs import RecordedRuns
from bloge.store.sql.check import DanglingView
from bloge.store.store import DEFAULT_LEASE, Pruned, Store, open_store
from bloge.store.timeline import run_timeline
from bloge.store.urls import DEFAULT_URL, masked, parse_store_url
from bloge.store.writer import RunWriter, StoreWriter

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_URL",
    "USAGE_GROUPS",
    "AnswerWaits",
    "ApprovalConflictError",
    "ApprovalForbiddenError",
    "DanglingView",
    "Decided",
    "PendingApproval",
    "Pruned",
    "RecordedRuns",
    "Run",
    "RunError",
    "RunEvent",
    "RunStatus",
    "RunWriter",
    "Store",
    "StoreBreakerStates",
    "StoreCounters",
    "StoreError",
    "StoreNotFoundError",
    "StoreWriter",
    "StoredMessage",
    "Thread",
    "ThreadBusyError",
    "ToolCallRecord",
    "TurnCheckpoint",
    "UsageLine",
    "answer_waits",
    "budget_spent",
    "decide_call",
    "event_chunk",
    "expired_runs",
    "find_paused_run",
    "follow",
    "masked",
    "open_store",
    "parse_store_url",
    "pending_approvals",
    "post_tool_results",
    "posted_results",
    "round_calls",
    "run_timeline",
    "run_to_continue",
    "usage_report",
    "waiting_counts",
]
