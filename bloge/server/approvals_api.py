"""Deciding paused runs over HTTP: approve or deny one waiting call, post the results of
external calls. When the last waiting call of a round is answered, the run continues here, in
a task of this server, and its stream can be re-joined at ``GET /runs/{id}/stream``.

The principal is the guard's (:func:`bloge.server.principals.principal_of`, the autopilot's
too): with API keys, a run of another principal's is not found (404); with four eyes
(``bloge.approvals.four-eyes``), the principal who started the run may not decide it (403).
Every decision is an entry of the hash-chained audit (``bloge approvals audit --verify``),
written in the decision's transaction. A stale hash, a second decision, a run that moved on:
409.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from pydantic import BaseModel, Field, RootModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bloge.agent import RunPaused
from bloge.autopilot.calls import audited
from bloge.core.context import OperatorContext, Principal
from bloge.server.inputs import STRICT_BODY, BadRequestError, json_body
from bloge.server.launch import discard
from bloge.server.principals import owner_filter, principal_of
from bloge.server.state import ServerState, state_of
from bloge.server.tasks import retrieved
from bloge.store import decide_call, post_tool_results, run_moved_on, run_to_continue

_log = logging.getLogger("bloge.server")

#: How long the last answer waits for the run it continues to be running again, and how
#: often it looks (see :func:`_taken_back`).
CONTINUE_SETTLE_SECONDS = 10.0
SETTLE_POLL_SECONDS = 0.02

class DecisionBody(BaseModel):
    """``POST /runs/{id}/approvals/{call_id}``."""

    model_config = STRICT_BODY

    approve: bool
    reason: str | None = Field(default=None, max_length=2000)
    hash: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


async def decide(request: Request) -> Response:
    """``POST /runs/{run_id}/approvals/{call_id}``: ``{"approve": bool, "reason"?, "hash"?}``;
    the decision (``run_id``: the run whose call it is — a sub-agent's, when the call waits
    in a run ``run_id`` started), how many calls still wait, and whether the run continues
    now (``stream``: where it goes on — its outermost caller that waited, for a sub-agent's
    run)."""
    state = state_of(request)
    body = await json_body(request, DecisionBody)
    who = principal_of(request)
    name = None if who is None else who.name
    run_id = request.path_params["run_id"]
    decided = await decide_call(
        state.store, run_id, request.path_params["call_id"], approve=body.approve,
        reason=body.reason, principal=name, hash=body.hash, owner=owner_filter(request),
        four_eyes=state.config.four_eyes,
        audit=audited(approved=body.approve, principal=name, reason=body.reason))
    continued = None
    if decided.remaining == 0:
        continued = await continue_run(state, decided.call.run_id, decided.call.requested_by)
    return JSONResponse({"run_id": decided.call.run_id, "call_id": decided.call.call_id,
                         "approved": body.approve, "remaining": decided.remaining,
                         "continued": continued is not None,
                         "stream": f"/runs/{continued}/stream" if continued else None})


async def tool_results(request: Request) -> Response:
    """``POST /runs/{run_id}/tool-results``: ``{call_id: result, …}`` (text, or any JSON)."""
    state = state_of(request)
    raw = await json_body(request, ToolResultsBody)
    if not raw.root:
        raise BadRequestError("post at least one call's result: {\"<call_id>\": result}")
    who = principal_of(request)
    run_id = request.path_params["run_id"]
    run = await state.store.get_run(run_id, owner=owner_filter(request))
    remaining = await post_tool_results(state.store, run_id, raw.root,
                                        principal=None if who is None else who.name,
                                        owner=owner_filter(request))
    owner = run.pending_approvals[0].requested_by if run.pending_approvals else None
    continued = await continue_run(state, run_id, owner) if remaining == 0 else None
    return JSONResponse({"run_id": run_id, "remaining": remaining,
                         "continued": continued is not None,
                         "stream": f"/runs/{continued}/stream" if continued else None})


class ToolResultsBody(RootModel[dict[str, Any]]):
    """``POST /runs/{id}/tool-results``: call id → result (text, or any JSON)."""


async def paused_response(state: ServerState, paused: RunPaused) -> JSONResponse:
    """A run that paused, answered with its record (``status``, ``pending_approvals``):
    202, for it has not finished."""
    if paused.run_id is None:  # only a run without a store has no id: the server has one
        raise paused
    run = await state.store.get_run(paused.run_id)
    return JSONResponse(run.to_dict(), status_code=202,
                        headers={"Bloge-Run-Id": paused.run_id})


async def continue_run(state: ServerState, paused_id: str, owner: str | None) -> str | None:
    """Resume the paused run ``paused_id`` in a task of this server, as its owner — or the
    outermost paused run that called it (a sub-agent's run goes on inside its caller's:
    :func:`~bloge.store.run_to_continue`); the id of the run started (``None``: not
    started; one that runs here already goes on as it is). It runs streamed, as a resume
    asked with ``"stream": true``: its stream, re-joined, carries its chunks."""
    run_id = await run_to_continue(state.store, paused_id)
    run = await state.store.get_run(run_id)
    operator = state.agents.streaming(run.agent_id)
    ctx = None if owner is None else OperatorContext.root(principal=Principal(owner))

    async def resume_paused() -> None:
        with contextlib.suppress(RunPaused):  # it waits again: its record says on what
            await operator.arun_resumed(run_id, ctx, on_chunk=discard)

    try:
        task = state.tasks.start(run_id, run.agent_id, resume_paused(),
                                 timeout=state.config.request_timeout)
    except Exception:  # noqa: BLE001 -- refused a task (at the limit, running): logged, left paused
        _log.warning("run %s could not continue here; POST /runs/%s/resume continues it",
                     run_id, run_id, exc_info=True)
        return None
    task.add_done_callback(retrieved)
    await _taken_back(state, run_id, task)
    return run_id


async def _taken_back(state: ServerState, run_id: str, task: asyncio.Task[Any]) -> None:
    """Until the run is no longer paused in the store (its task took it back, or ended), at
    most :data:`CONTINUE_SETTLE_SECONDS`: a stream re-joined on any worker right after the
    answer then follows the continued run, rather than find it still paused and end."""
    if task.done():
        return
    await run_moved_on(state.store, await state.store.get_run(run_id),
                       lambda run: run.status.paused and not task.done(),
                       within=CONTINUE_SETTLE_SECONDS, every=SETTLE_POLL_SECONDS)


ROUTES = [
    Route("/runs/{run_id}/approvals/{call_id}", decide, methods=["POST"]),
    Route("/runs/{run_id}/tool-results", tool_results, methods=["POST"]),
]
