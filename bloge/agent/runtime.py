"""The loop's plug-in surface: what the packages above ``bloge.agent`` build on to drive runs.

A user runs agents through :mod:`bloge.agent` (operators, the ``Agent`` facade); a package
that runs them another way — the run store, Temporal, the server, a journal — plugs into the
loop through these names, and through no other module of ``bloge.agent`` (a test holds every
package to that):

- :class:`AgentEngine` runs one agent, from a :class:`RunStart` (new input after a history,
  or a checkpoint with the tool round it was in): ``await engine.run(start, ctx, sink=…,
  observer=…, effects=…)``.
- A :class:`RunObserver` records a run; its hooks are awaited where the run's state must be
  durable before it goes on. :class:`PendingRound` and :class:`RecordedResult` are what a
  recorded run resumes from. A :class:`RunStore` is what an agent operator's ``store=`` does;
  :func:`run_store_of` finds the one of a ``store=`` value (a package registers its own).
- :class:`RunEffects` performs a run's I/O elsewhere (a durable runner's activities): its
  :data:`ModelCall` and its :class:`ToolRound`, whose :class:`ToolOutcome` values the engine
  continues with; effects that are :class:`SummaryEffects` make a ``summary(n)`` memory's
  summaries too (a :data:`SummaryCall`), and tell the listeners of each.
  :class:`ToolDispatcher` is the tool round the engine runs by default, :func:`response_of`
  the one answer of a model call (whole, or streamed and joined), :func:`not_an_answer` the
  error for anything else, :data:`SUMMARY_LENGTH` how much of a tool's output a listener
  payload keeps.
- A paused run (a tool round whose calls wait for approval or for results posted from
  outside) raises :class:`RunPaused` with its :class:`PendingCall` values; it resumes with a
  :class:`PendingRound` holding each call's :class:`Decision` (:func:`decision_of`) or posted
  result (:func:`posted_result`); :func:`call_hash` binds a decision to its call. A call
  whose sub-agent's run paused has an outcome that waits on it (:attr:`ToolOutcome.waits_on`,
  a :class:`ChildWait`): the run pauses after the round, and its ``RunPaused.children`` say
  on which runs.
- :class:`BudgetCounters` keep the budgets shared beyond one run (a thread's, an API
  key's) where every worker sees them: a store reserves a :class:`Claim`'s :class:`Spend`
  atomically (judging it with :func:`refusal` and :func:`calls_that_fit`), or answers a
  :class:`Refusal`, and records each model call's :class:`CallUsage`.
- A runner that runs sub-agents' child runs itself sets :data:`CHILDREN_ELSEWHERE` while a
  :class:`SubAgentTool`'s call runs: the call raises :class:`ChildRunRequested` with its
  question instead; :func:`child_run_id` is the child's run id for a call, :func:`question_of`
  the text a call to another agent (a sub-agent, a remote one) asks it, :func:`opening_of`
  what a child that starts from its caller's conversation (``context = "parent"``) starts
  from.
- A :data:`ChunkSink` receives a run's stream chunks as they happen.
- :class:`ListenerChain` notifies listeners of the :data:`CALLBACKS` they implement.
- :func:`check_targets` checks that the handoffs of a project's agents go to its agents
  (before their engines are linked, :meth:`AgentEngine.link`).

The records these carry (``AgentInput``, ``AgentOutput``, ``AgentCheckpoint``, the stream
chunks, the listener payloads) are the public names of :mod:`bloge.agent`.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.agent.caller_context import opening_of as opening_of
    from bloge.agent.handoffs import check_targets as check_targets
    from bloge.agent.listeners import CALLBACKS as CALLBACKS
    from bloge.agent.listeners import Callback as Callback
    from bloge.agent.listeners import ListenerChain as ListenerChain
    from bloge.agent.loop.answers import not_an_answer as not_an_answer
    from bloge.agent.loop.answers import response_of as response_of
    from bloge.agent.loop.approval import Decision as Decision
    from bloge.agent.loop.approval import PendingCall as PendingCall
    from bloge.agent.loop.approval import call_hash as call_hash
    from bloge.agent.loop.approval import decision_of as decision_of
    from bloge.agent.loop.approval import posted_result as posted_result
    from bloge.agent.loop.approval import unanswered as unanswered
    from bloge.agent.loop.budget import BudgetCounters as BudgetCounters
    from bloge.agent.loop.budget import CallerAllowance as CallerAllowance
    from bloge.agent.loop.budget import CallUsage as CallUsage
    from bloge.agent.loop.budget import Claim as Claim
    from bloge.agent.loop.budget import Refusal as Refusal
    from bloge.agent.loop.budget import RunLedger as RunLedger
    from bloge.agent.loop.budget import Spend as Spend
    from bloge.agent.loop.budget import SummaryCall as SummaryCall
    from bloge.agent.loop.budget import SummaryEffects as SummaryEffects
    from bloge.agent.loop.budget import caller_ledger as caller_ledger
    from bloge.agent.loop.budget import calls_that_fit as calls_that_fit
    from bloge.agent.loop.budget import check_priced as check_priced
    from bloge.agent.loop.budget import refusal as refusal
    from bloge.agent.loop.budget import spending_under as spending_under
    from bloge.agent.loop.engine import AgentEngine as AgentEngine
    from bloge.agent.loop.engine import ModelCall as ModelCall
    from bloge.agent.loop.engine import RunEffects as RunEffects
    from bloge.agent.loop.engine import ToolRound as ToolRound
    from bloge.agent.loop.observer import PendingRound as PendingRound
    from bloge.agent.loop.observer import RecordedResult as RecordedResult
    from bloge.agent.loop.observer import RunObserver as RunObserver
    from bloge.agent.loop.observer import RunStore as RunStore
    from bloge.agent.loop.observer import run_store_of as run_store_of
    from bloge.agent.loop.pause import AWAITING_APPROVAL as AWAITING_APPROVAL
    from bloge.agent.loop.pause import AWAITING_TOOL_RESULTS as AWAITING_TOOL_RESULTS
    from bloge.agent.loop.pause import ChildWait as ChildWait
    from bloge.agent.loop.pause import RunPaused as RunPaused
    from bloge.agent.loop.start import RunStart as RunStart
    from bloge.agent.loop.tools import SUMMARY_LENGTH as SUMMARY_LENGTH
    from bloge.agent.loop.tools import ChunkSink as ChunkSink
    from bloge.agent.loop.tools import DescendantCalls as DescendantCalls
    from bloge.agent.loop.tools import ToolDispatcher as ToolDispatcher
    from bloge.agent.loop.tools import ToolOutcome as ToolOutcome
    from bloge.agent.subagent import CHILDREN_ELSEWHERE as CHILDREN_ELSEWHERE
    from bloge.agent.subagent import ChildRunRequested as ChildRunRequested
    from bloge.agent.subagent import SubAgentTool as SubAgentTool
    from bloge.agent.subagent import child_run_id as child_run_id
    from bloge.agent.subagent import question_of as question_of
else:
    # Lazily, as a package exports its names: a module that needs the chunk sink's type does
    # not load the engine.
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
