"""The runtime chapter's controller: ``POST /chat`` — text in, the answer as text out — for
the default agent, and ``POST /agents/{id}/chat`` for any; ``GET /agents`` lists them."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from bloge.agent import AgentRunError, RunPaused
from bloge.core.ids import new_id
from bloge.server.inputs import text_body
from bloge.server.launch import answer_whole, run_failure
from bloge.server.principals import run_context
from bloge.server.state import state_of
from bloge.server.tasks import RunCancelledError


async def chat(request: Request) -> Response:
    """``POST /chat``: the raw body (or ``?q=``) to the default agent; its answer as text."""
    return await _chat(request, state_of(request).agents.default_id())


async def agent_chat(request: Request) -> Response:
    """``POST /agents/{agent_id}/chat``: the same, for any agent."""
    agent_id = request.path_params["agent_id"]
    state_of(request).agents.definition(agent_id)
    return await _chat(request, agent_id)


async def _chat(request: Request, agent_id: str) -> Response:
    state = state_of(request)
    text = await text_body(request)
    operator = state.agents.whole(agent_id)
    run_id = new_id()
    named = {"Bloge-Run-Id": run_id}
    ctx = run_context(request)
    try:
        output = await answer_whole(state, request, agent_id,
                                    lambda run: operator.aexecute(text, ctx, run_id=run),
                                    run_id=run_id)
    except (AgentRunError, RunCancelledError, TimeoutError) as error:
        failure = await run_failure(state, run_id, error)
        return PlainTextResponse(failure.message, status_code=failure.status, headers=named)
    except RunPaused as paused:  # 202: not answered yet; what it waits on, and where
        waits = "; ".join(f"{call.tool} ({call.call_id})" for call in paused.pending)
        return PlainTextResponse(
            f"run {run_id} is {paused.status.replace('_', ' ')}: {waits}; decide with POST "
            f"/runs/{run_id}/approvals/<call_id>, then follow GET /runs/{run_id}/stream",
            status_code=202, headers=named)
    if output is None:
        return Response(status_code=499)
    return PlainTextResponse(output.content, headers=named)


async def list_agents(request: Request) -> Response:
    """``GET /agents``: every agent, with what the chat page shows of it."""
    agents = state_of(request).agents
    return JSONResponse({"default": agents.default, "agents": [
        {"id": agent_id, "model": agents.definition(agent_id).model,
         "streaming": agents.definition(agent_id).streaming,
         "tools": [tool.name for tool in agents.definition(agent_id).tools]}
        for agent_id in agents.ids()]})


ROUTES = [
    Route("/chat", chat, methods=["POST"]),
    Route("/agents", list_agents, methods=["GET"]),
    Route("/agents/{agent_id}/chat", agent_chat, methods=["POST"]),
]
