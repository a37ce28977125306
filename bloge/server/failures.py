"""Exceptions as responses: what each failure answers, with its real status."""

from __future__ import annotations

import logging

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from bloge.agent import AgentRunError
from bloge.core.errors import BlogeUsageError
from bloge.server.agents import UnknownAgentError
from bloge.server.guard import BodyTooLargeError
from bloge.server.inputs import BadRequestError
from bloge.server.launch import RunTimedOutError, run_failure
from bloge.server.problems import problem
from bloge.server.tasks import RunRunningError, ServerStoppingError, TooManyRunsError
from bloge.store import (
    ApprovalConflictError,
    ApprovalForbiddenError,
    StoreError,
    StoreNotFoundError,
    ThreadBusyError,
)

_log = logging.getLogger("bloge.server")
#: What a client is told of a store that fails (the server's log says more).
UNAVAILABLE = "the run store cannot be used now; the server's log says why"


async def bad_request(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, BadRequestError)
    return problem(exc.message, status=400, param=exc.param)


async def not_found(request: Request, exc: Exception) -> Response:
    if isinstance(exc, StoreError):  # the client sees the id; where the store is, the log
        _log.debug("%s %s: %s", request.method, request.url.path, exc)
        return problem(exc.reason, status=404)
    return problem(str(exc.args[0]) if exc.args else str(exc), status=404)


async def busy(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ThreadBusyError)
    return problem(exc.reason, status=409, param="thread_id", code="thread_busy")


async def approval_conflict(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StoreError)
    return problem(exc.reason, status=409, code="approval_conflict")


async def four_eyes(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StoreError)
    return problem(exc.reason, status=403, code="four_eyes")


async def running(request: Request, exc: Exception) -> Response:
    return problem(str(exc), status=409, code="run_running")


async def too_many(request: Request, exc: Exception) -> Response:
    limit = request.app.state.bloge.tasks.limit  # the autopilot may have changed it
    return problem(f"the server runs {limit} runs already; try again shortly", status=429,
                   code="too_many_runs", headers={"Retry-After": "1"})


async def usage(request: Request, exc: Exception) -> Response:
    return problem(str(exc), status=400)


async def unavailable(request: Request, exc: Exception) -> Response:
    # Why a store fails names where it is (a path, a user, a host): for the log alone.
    _log.warning("%s %s: %s", request.method, request.url.path, exc)
    return problem(UNAVAILABLE, status=503, code="store_unavailable")


async def stopping(request: Request, exc: Exception) -> Response:
    return problem(str(exc), status=503, code="server_stopping")


async def timed_out(request: Request, exc: Exception) -> Response:
    """A run past the request time limit: 504 naming the run (in ``Bloge-Run-Id`` too) and
    how to resume it."""
    if isinstance(exc, RunTimedOutError):
        failure = await run_failure(request.app.state.bloge, exc.run_id, exc)
        return problem(failure.message, status=failure.status, code=failure.code,
                       headers={"Bloge-Run-Id": exc.run_id})
    limit = request.app.state.bloge.config.request_timeout
    return problem(f"the request took longer than the server's time limit ({limit:g} s)",
                   status=504, code="timeout")


async def too_large(request: Request, exc: Exception) -> Response:
    limit = request.app.state.bloge.config.max_body_bytes
    return problem(f"the request body is larger than {limit} bytes", status=413)


async def run_failed(request: Request, exc: Exception) -> Response:
    return problem(str(exc), status=500, code="run_failed")


async def gone(request: Request, exc: Exception) -> Response:
    """The client left (or was closed for being late, see :mod:`bloge.server.connections`)
    before its request's body was in: nobody to answer, nothing to log."""
    return Response(status_code=499)


async def no_route(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 (no such path) and 405 (not this method), in the one JSON shape."""
    assert isinstance(exc, HTTPException)
    endpoint = f"{request.method} {request.url.path}"
    if exc.status_code == 404:
        message = f"no endpoint {endpoint}"
    elif exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "none")
        message = f"{endpoint}: the method is not allowed here (allowed: {allowed})"
    else:
        message = f"{endpoint}: {exc.detail}"
    return problem(message, status=exc.status_code, headers=dict(exc.headers or {}))


async def internal(request: Request, exc: Exception) -> Response:
    _log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return problem(f"the server failed: {type(exc).__name__}", status=500)


HANDLERS = {
    BodyTooLargeError: too_large,
    BadRequestError: bad_request,
    UnknownAgentError: not_found,
    StoreNotFoundError: not_found,
    ThreadBusyError: busy,
    ApprovalConflictError: approval_conflict,
    ApprovalForbiddenError: four_eyes,
    TooManyRunsError: too_many,
    RunRunningError: running,
    BlogeUsageError: usage,
    StoreError: unavailable,
    ServerStoppingError: stopping,
    AgentRunError: run_failed,
    TimeoutError: timed_out,
    HTTPException: no_route,
    ClientDisconnect: gone,
    Exception: internal,
}
