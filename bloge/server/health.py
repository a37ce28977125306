"""``GET /healthz`` (the process answers), ``GET /readyz`` (its store answers too) and
``GET /metrics``."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bloge.server.failures import UNAVAILABLE
from bloge.server.metrics import CONTENT_TYPE
from bloge.server.state import state_of
from bloge.store import StoreError, waiting_counts

_log = logging.getLogger("bloge.server")


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    state = state_of(request)
    try:
        await state.store.list_runs(limit=1)
    except StoreError as exc:
        _log.warning("readyz: %s", exc)
        return JSONResponse({"status": "unavailable", "reason": UNAVAILABLE}, status_code=503)
    return JSONResponse({"status": "ready", "agents": state.agents.ids(),
                         "runs": len(state.tasks)})


async def metrics(request: Request) -> Response:
    state = state_of(request)
    try:
        waiting = await waiting_counts(state.store)
        await state.metrics.tally_answers(state.store)
    except StoreError as exc:  # the runs' own metrics still answer
        _log.warning("metrics: the calls paused runs wait on are not counted: %s", exc)
        return Response(state.metrics.render(), media_type=CONTENT_TYPE)
    return Response(state.metrics.render_with(waiting, state.store.clock()),
                    media_type=CONTENT_TYPE)


ROUTES = [
    Route("/healthz", healthz, methods=["GET"]),
    Route("/readyz", readyz, methods=["GET"]),
    Route("/metrics", metrics, methods=["GET"]),
]
