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
:func:`find_paused_runs` finds the runs by their calls; :func:`run_to_continue` names the run to
resume once they are answered (a sub-agent's paused run goes on inside its caller's).
:func:`guest_runs` names the sub-agents' runs that wrote on their caller's thread.
:func:`run_moved_on` waits a little for a run changed elsewhere (cancelled, answered) to show
it in the store.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

# ``follow`` is also the name of its module, which the import system binds in this package
# when the module loads: the function is bound here, eagerly, so that it wins.
from bloge.store.follow import follow as follow

# Importing it registers how an operator given store=Store records its runs: keep it eager.
from bloge.store.runs import RecordedRuns as RecordedRuns

# The rest loads on first use: a recorded run needs neither approvals nor usage reports.
if TYPE_CHECKING:
    from bloge.store.approvals import AnswerWaits as AnswerWaits
    from bloge.store.approvals import ApprovalConflictError as ApprovalConflictError
    from bloge.store.approvals import ApprovalForbiddenError as ApprovalForbiddenError
    from bloge.store.approvals import Decided as Decided
    from bloge.store.approvals import answer_waits as answer_waits
    from bloge.store.approvals import decide_call as decide_call
    from bloge.store.approvals import find_paused_runs as find_paused_runs
    from bloge.store.approvals import pending_approvals as pending_approvals
    from bloge.store.approvals import post_tool_results as post_tool_results
    from bloge.store.approvals import posted_results as posted_results
    from bloge.store.approvals import round_calls as round_calls
    from bloge.store.approvals import run_to_continue as run_to_continue
    from bloge.store.approvals import stalled_runs as stalled_runs
    from bloge.store.approvals import waiting_counts as waiting_counts
    from bloge.store.breakers import StoreBreakerStates as StoreBreakerStates
    from bloge.store.budgets import USAGE_GROUPS as USAGE_GROUPS
    from bloge.store.budgets import StoreCounters as StoreCounters
    from bloge.store.budgets import UsageLine as UsageLine
    from bloge.store.budgets import budget_spent as budget_spent
    from bloge.store.budgets import usage_report as usage_report
    from bloge.store.errors import StoreError as StoreError
    from bloge.store.errors import StoreNotFoundError as StoreNotFoundError
    from bloge.store.errors import ThreadBusyError as ThreadBusyError
    from bloge.store.events import event_chunk as event_chunk
    from bloge.store.masked_records import masked_event as masked_event
    from bloge.store.masked_records import masked_message as masked_message
    from bloge.store.masked_records import masked_run as masked_run
    from bloge.store.records import EVAL_TAG as EVAL_TAG
    from bloge.store.records import PendingApproval as PendingApproval
    from bloge.store.records import Run as Run
    from bloge.store.records import RunError as RunError
    from bloge.store.records import RunEvent as RunEvent
    from bloge.store.records import RunStatus as RunStatus
    from bloge.store.records import StoredMessage as StoredMessage
    from bloge.store.records import Thread as Thread
    from bloge.store.records import ToolCallRecord as ToolCallRecord
    from bloge.store.records import TurnCheckpoint as TurnCheckpoint
    from bloge.store.runs import check_not_a_guest as check_not_a_guest
    from bloge.store.runs import check_resumable as check_resumable
    from bloge.store.runs import run_tools as run_tools
    from bloge.store.settle import run_moved_on as run_moved_on
    from bloge.store.sql.check import DanglingView as DanglingView
    from bloge.store.store import DEFAULT_LEASE as DEFAULT_LEASE
    from bloge.store.store import Pruned as Pruned
    from bloge.store.store import Store as Store
    from bloge.store.store import open_store as open_store
    from bloge.store.thread_log import guest_runs as guest_runs
    from bloge.store.timeline import run_timeline as run_timeline
    from bloge.store.urls import DEFAULT_URL as DEFAULT_URL
    from bloge.store.urls import masked as masked
    from bloge.store.urls import parse_store_url as parse_store_url
    from bloge.store.writer import RunWriter as RunWriter
    from bloge.store.writer import StoreWriter as StoreWriter
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
