"""The patches of the agent workflow's code, and how a run asks for one.

Each change to the commands the workflow issues is a patch (``workflow.patched(id)``), so
that a run begun before it replays the way it ran. Temporal records a marker for each patch
a run takes — and, with it, an upsert of the run's ``TemporalChangeVersion`` search
attribute: two history events, and their work on the service, per patch and per run.

A run takes every patch of :data:`EARLIER` without a marker of its own (:func:`patched`)
when it was begun after :data:`BASELINE`, which it tells in one of two ways:

* bloge's starts (:func:`current_memo`: a client's, a child workflow's, a run continued as
  new) carry ``BASELINE`` in the run's memo, which is part of the run's first history
  event: no marker at all, so a run's history has the events of its own work only;
* a run begun without that memo (by a client from before it) records the ``BASELINE``
  marker, once.

A run begun before the baseline (neither) asks for each patch as it did. A patch added later
asks ``workflow.patched`` itself: runs begun after the baseline but before it must not take
it.
"""

from __future__ import annotations

from temporalio import workflow

#: The patch after which runs continue as new (workflows begun before replay without it).
LONG_RUNS = "bloge.continue-as-new"
#: The patch that reports a tool activity that did not complete (workflows begun before it
#: replay without that activity).
REPORT_FAILED_TOOLS = "bloge.report-failed-tools"
#: The patch after which a run that has no one to tell its end (no store, no listeners) ends
#: without the finish activity (workflows begun before it replay with that activity).
QUIET_ENDS = "bloge.quiet-ends"
#: The patch after which a sub-agent call's child run is a child workflow (workflows begun
#: before it replay with the child run inside the call's tool activity).
CHILD_WORKFLOWS = "bloge.child-workflows"
#: The patch after which a child workflow shares its callers' budgets and the run tree's
#: tool-call ceiling (see :mod:`bloge.temporal.shares`; workflows begun before it replay
#: with their children's budgets and calls apart).
CHILD_SHARES = "bloge.child-shares"
#: The patch after which a run's approvals pause its workflow (before it, they failed it).
PAUSES = "bloge.pauses"
#: The patch after which a run's external calls pause its workflow (before it, they failed
#: it).
TOOL_RESULTS = "bloge.tool-results"
#: The patch after which a paused run takes new limits (``max_turns``, its budget) with its
#: answers (``LIMITS_SIGNAL``). Asked of ``workflow.patched`` itself, and only by a run given
#: such limits: a history made by a worker without it replays without them.
RESUME_LIMITS = "bloge.resume-limits"
#: The patch after which a recorded run that ends in the middle of a tool round (cancelled
#: while its tools ran, say) keeps the checkpoint before that round, of the turn before, as
#: a local run does: resumed, it asks the model that turn again rather than count one more.
#: Asked of ``workflow.patched`` itself, and only by a run that ends so.
ROUND_CHECKPOINTS = "bloge.round-checkpoints"
#: The patch after which a run is budgeted with its worker's budget policy (the settings'
#: default run limits, prices and answer cap, see :func:`~bloge.temporal.limits.kept_policy`).
#: Asked of ``workflow.patched`` itself, and only by a run whose worker has such a policy: a
#: history made before replays with the agent's own budget and the shipped prices.
POLICY_BUDGETS = "bloge.policy-budgets"
#: The patch after which a run of an agent with a thread budget of its own (``budget thread
#: { … }``, its own or that of an agent it hands over to) is refused at its start, since a
#: workflow keeps no thread budget. Asked of ``workflow.patched`` itself, and only by such a
#: run: a history made before replays as it ran, without that budget.
THREAD_BUDGETS_REFUSED = "bloge.thread-budgets-refused"
#: The patch after which new limits a paused run cannot keep (``usd`` on a model its worker
#: has no price for, signalled by a client that did not refuse them) fail the run as it goes
#: on, as a local resume refuses them (before it, its workflow task failed again and again).
#: Asked of ``workflow.patched`` itself, and only by such a run.
UNPRICED_LIMITS = "bloge.unpriced-limits"
#: The patch after which a paused round drops an answer sent for another turn's round (a
#: resumer that read the store before that round went on sends its answers again, by call
#: ids a later round may reuse); before it, a round took the first answer to each of its call
#: ids, whatever its turn. Asked of ``workflow.patched`` itself, and only by a run sent such
#: an answer: a history made before replays taking it.
STALE_ANSWERS = "bloge.stale-answers"
#: The patch after which a paused round drops new limits sent for another turn's round (a
#: resumer that read the store before that round went on sends them again, and they would
#: hold for the rest of the run, though the later round's resumer gave none); before it, a
#: round took every limit that came, whatever its turn. Asked of ``workflow.patched``
#: itself, and only by a run sent such limits: a history made before replays taking them.
STALE_LIMITS = "bloge.stale-limits"
#: The patch after which a ``summary(n)`` memory's summaries are model calls of the run:
#: reserved against its budget, sent with the ``max_tokens`` its own calls carry, and priced
#: (before it, they counted toward its token limits only). Asked of ``workflow.patched``
#: itself, and only by a run that summarizes: a history made before replays without them.
SUMMARY_CALLS = "bloge.summary-calls"
#: The patches a run begun after :data:`BASELINE` takes without their markers.
EARLIER = frozenset({LONG_RUNS, REPORT_FAILED_TOOLS, QUIET_ENDS, CHILD_WORKFLOWS,
                     CHILD_SHARES, PAUSES, TOOL_RESULTS})
#: The patch that stands for all of :data:`EARLIER`. A run asks for it with its first
#: patch (``LONG_RUNS``, as its workflow task begins), so it is recorded at the same point
#: of every history.
BASELINE = "bloge.baseline"


def current_memo() -> dict[str, bool]:
    """The memo of a run begun now: it takes the code after :data:`BASELINE` with no
    marker."""
    return {BASELINE: True}


def patched(patch_id: str) -> bool:
    """Whether the run takes the code after ``patch_id``, one of :data:`EARLIER`: a run
    begun after :data:`BASELINE` does; an earlier one as its history says (a marker
    recorded now, when it first runs that code)."""
    if patch_id not in EARLIER:
        raise ValueError(f"patch {patch_id!r} is not one of the baseline's: ask "
                         "workflow.patched for it")
    return (workflow.memo_value(BASELINE, default=False, type_hint=bool)
            or workflow.patched(BASELINE) or workflow.patched(patch_id))
