"""A completion's run and its client's own tools.

The request's tools join the agent's for its request as *external* tools (no operator here:
the client runs them), with its ``tool_choice`` and ``parallel_tool_calls``
(:func:`run_changes`); they are its run's own tools too, kept with the run in the store
(``bloge_runs.tools``), so that the run offers them however it is continued
(``bloge runs resume``, ``agent.resume``). When the model calls one, the run pauses
(``awaiting_tool_results``, holding no worker) and its completion ends with those calls
(:func:`paused_answer`); the agent's own calls of the same round have run on the server, and
are not shown. The client's next request, its messages ending with the calls' results,
continues that same run (:func:`continue_run`): it is found by the ids of the calls and the
conversation the messages carry (ids repeat: some model servers name every call ``call_0``),
among the runs of the same principal only, and its results are posted
(:func:`post_results`) just before it resumes.
Ids no paused run of that principal waits on with that conversation, results for only some
of the calls, results sent twice: each is a clear error naming the message at fault. A round
whose other calls wait for a person's approval ends with the client's calls all the same;
their results wait for the decisions (a 409 naming the calls to decide, the results not
taken), and the same request sent again once they are taken continues the run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bloge.agent import AgentDef, AgentToolRef, AgentUsage, RunPaused
from bloge.core.ids import new_id
from bloge.llm import LlmMessage, ToolCall, ToolDefinition
from bloge.server import openai_wire as wire
from bloge.server.launch import RunFailure
from bloge.server.openai_tools import ClientTools, ToolReplies, check_own_names, tool_replies
from bloge.store import (
    ApprovalConflictError,
    PendingApproval,
    Run,
    RunStatus,
    Store,
    StoreNotFoundError,
    find_paused_runs,
    post_tool_results,
)


class ToolRoundError(Exception):
    """The client's tool results cannot continue a run: ``status``, and the field at fault."""

    def __init__(self, message: str, *, status: int, param: str | None, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.param = param
        self.code = code


def run_changes(definition: AgentDef, tools: ClientTools) -> dict[str, Any]:
    """The agent's fields a request with the client's ``tools`` changes: its tools (the
    agent's, then the client's, which wait for the client), ``tool_choice`` (``"none"``
    offers none of the client's, and leaves the agent's own choice) and
    ``parallel_tool_calls``."""
    offered = tools.offered
    if not offered:
        return {}
    changes: dict[str, Any] = {"tools": (*definition.tools, *(
        AgentToolRef.external_tool(tool.name, description=tool.description,
                                   parameters=tool.parameters) for tool in offered))}
    if tools.choice is not None:
        changes["tool_choice"] = tools.choice
    if tools.parallel is not None:
        changes["parallel_tool_calls"] = tools.parallel
    return changes


@dataclass(frozen=True, slots=True)
class Continued:
    """A paused run the client's results continue: its id, the results, and its usage and
    events so far (its completion tells the usage from here on, and streams the events
    after these)."""

    run_id: str
    results: Mapping[str, str]
    usage: AgentUsage
    events: int


async def continue_run(store: Store, agent_id: str, replies: ToolReplies,
                       messages: Sequence[LlmMessage], *, principal: str | None) -> Continued:
    """The paused run of ``principal`` that waits on the calls the client's results answer
    (with ``principal`` ``None``, a server without keys: any run); :class:`ToolRoundError`
    when no such run waits, when it is another agent's, or when results of some of its
    calls are missing. The results are posted by :func:`post_results`, once the run has its
    task (a run refused one keeps its calls waiting, for the client's retry)."""
    where = f"messages[{replies.first}].tool_call_id"
    ids = replies.call_ids()
    run = await _run_of(store, ids, replies.calls, replies.started, principal=principal)
    if run is None:
        calls = f"tool call{'s' if len(ids) > 1 else ''} {', '.join(map(repr, ids))}"
        why = (f"the history does not match any paused run of yours waiting on {calls} (the "
               "assistant message's tool calls — ids, names, arguments — and the messages "
               "before it must be those of the run)"
               if await find_paused_runs(store, ids, owner=principal) else
               f"no paused run waits on {calls}: its results were sent already (its run has "
               "moved on), or no run of yours made the call")
        raise ToolRoundError(f"{where}: {why}; to ask about these results anew, end the "
                             "messages with a user message", status=404, param=where,
                             code="tool_call_not_found")
    run_id = run.id
    if run.agent_id != agent_id:
        raise ToolRoundError(f"model: the run waiting on these tool calls is of agent "
                             f"{run.agent_id!r}, not {agent_id!r}", status=400, param="model",
                             code="model_mismatch")
    now = store.clock()
    waiting = [call for call in run.pending_approvals
               if call.state == "waiting" and not call.expired(now)]
    missing = [call.call_id for call in waiting
               if call.kind == "external" and call.call_id not in replies.results]
    if missing:
        raise ToolRoundError(
            f"messages[{len(messages)}]: run {run_id} also waits on the result of tool "
            f"call{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}: send a "
            "tool message for each call of the assistant message", status=400,
            param=f"messages[{len(messages)}]", code="tool_results_missing")
    undecided = [call.call_id for call in waiting if call.kind == "approval"]
    if undecided:  # the results are not taken: the same request, sent again, continues it
        raise awaiting_approval(run_id, undecided, then="send this request again")
    # +1: the event the posted results write.
    return Continued(run_id, dict(replies.results), run.usage, run.event_count + 1)


async def _run_of(store: Store, call_ids: Sequence[str], called: Sequence[ToolCall],
                  started: Sequence[LlmMessage], *, principal: str | None) -> Run | None:
    """The paused run of ``principal`` waiting on ``call_ids`` whose conversation the
    client's messages carry: started with exactly ``started``, its round's calls those the
    assistant message shows (``called``); the newest of truly identical ones. The store
    narrows the runs by their calls and input; those left are read until one matches (the
    first, but for identical questions whose model answered differently)."""
    for run_id in await find_paused_runs(store, call_ids, owner=principal, input=started):
        run = await store.get_run(run_id)
        if _same_calls(called, run.pending_approvals):
            return run
    return None


def _same_calls(called: Sequence[ToolCall], round_calls: Sequence[PendingApproval]) -> bool:
    """Each of ``called`` is a client's call of the run's round, with its name and arguments
    (compared as JSON: a client may write them again with other spacing)."""
    made = {call.call_id: call for call in round_calls if call.kind == "external"}
    return bool(called) and all(
        call.id in made and made[call.id].tool == call.name
        and _arguments(made[call.id].arguments) == _arguments(call.arguments)
        for call in called)


def _arguments(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


async def post_results(store: Store, run: CompletionRun, *, principal: str | None) -> None:
    """Post the client's results to the paused run ``run`` continues (in the run's task,
    just before it resumes); :class:`ToolRoundError` when another request posted them
    first, or the run is gone."""
    where = "messages"
    try:
        await post_tool_results(store, run.run_id, dict(run.results), principal=principal,
                                owner=principal)
    except ApprovalConflictError as exc:
        raise ToolRoundError(f"{where}: {exc}", status=409, param=where,
                             code="tool_results_conflict") from None
    except StoreNotFoundError as exc:
        raise ToolRoundError(f"{where}: {exc}", status=404, param=where,
                             code="tool_call_not_found") from None


def paused_answer(paused: RunPaused, *, since: AgentUsage) -> wire.Answer | RunFailure:
    """What the client is told of a run that paused: the model's text and the calls of the
    client's tools it waits on, with the usage since ``since`` (the completion's own) — also
    when calls wait for a person's approval beside them, for nothing keeps the client from
    running its own (its results continue the run once those are decided); a run that waits
    for a person's approval alone is an error saying where to decide."""
    external = {call.call_id for call in paused.pending if call.kind == "external"}
    response = paused.tool_round.response
    calls = [call for call in response.tool_calls if call.id in external]
    if not calls and paused.status == RunStatus.AWAITING_APPROVAL.value:
        error = awaiting_approval(paused.run_id or "", [
            call.call_id for call in paused.pending if call.kind == "approval"],
            then=f"follow the run with GET /runs/{paused.run_id}/stream")
        return RunFailure(error.status, error.message, error.code)
    return wire.calling(response.content, calls, usage_since(paused.checkpoint.usage, since))


def awaiting_approval(run_id: str, call_ids: Sequence[str], *, then: str) -> ToolRoundError:
    """The 409 of run ``run_id``, which waits for a person's approval of ``call_ids`` (at
    least one); ``then``: what the client does once they are decided."""
    calls = ", ".join(map(repr, call_ids))
    return ToolRoundError(
        f"run {run_id} waits for a person's approval of tool call(s) {calls}: decide each "
        f"with POST /runs/{run_id}/approvals/{{call_id}}, then {then}", status=409,
        param=None, code="awaiting_approval")


def usage_since(total: AgentUsage, before: AgentUsage) -> AgentUsage:
    """The usage of a completion that continued a run (``before``: the run's until then):
    its own model calls only."""
    if not before.llm_calls:
        return total
    return AgentUsage(total.llm_calls - before.llm_calls,
                      total.prompt_tokens - before.prompt_tokens,
                      total.completion_tokens - before.completion_tokens,
                      total.unreported_calls - before.unreported_calls)


#: A new run's usage before its completion: none (one value for every run: it is frozen).
NO_USAGE = AgentUsage()


@dataclass(frozen=True, slots=True)
class CompletionRun:
    """The run a completion request is: a new one (``resumed`` false), or the paused run its
    tool results continue; ``changes``: the agent's fields it runs with (the request's
    sampling and tools)."""

    run_id: str
    changes: Mapping[str, Any]
    resumed: bool = False
    tools: tuple[ToolDefinition, ...] = ()
    """A new run's own tools (the client's); a continued run has its own in the store."""
    results: Mapping[str, str] = field(default_factory=dict)
    """A continued run's tool results, by call id: posted by :func:`post_results`."""
    usage: AgentUsage = NO_USAGE
    events: int = 0


async def completion_run(store: Store, definition: AgentDef, chat: wire.ChatRequest, *,
                         principal: str | None) -> CompletionRun:
    """The run ``chat`` asks for: with its tool results at the end of its messages, the
    paused run they continue (see :func:`continue_run`); else a new run.
    :class:`~bloge.server.inputs.BadRequestError` when a client's tool takes the name of
    one of the agent's; :class:`ToolRoundError` when the results continue no run."""
    check_own_names(chat.tools, [tool.name for tool in definition.tools])
    changes = {**chat.sampling, **run_changes(definition, chat.tools)}
    replies = tool_replies(chat.input.messages)
    if replies is None:
        return CompletionRun(new_id(), changes, tools=chat.tools.offered)
    continued = await continue_run(store, definition.id, replies, chat.input.messages,
                                   principal=principal)
    return CompletionRun(continued.run_id, changes, resumed=True, results=continued.results,
                         usage=continued.usage, events=continued.events)
