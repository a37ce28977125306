"""The autopilot's approval API: knobs, pending proposals, approve and reject — each call
made by the principal its API key names, so that nobody approves their own proposal.

Every endpoint needs an API key (``bloge.server.api-keys``), also on loopback: an approval
applies a change to the running system. A key's principal is the guard's
(:func:`bloge.server.principals.principal_of`): ``key:`` and the first 12 hex digits of its
SHA-256, the same in every process and log, never the key itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bloge.autopilot import (
    ApprovalRefusedError,
    Autopilot,
    ProposalNotFoundError,
)
from bloge.core.errors import BlogeError
from bloge.server.inputs import STRICT_BODY, json_body
from bloge.server.principals import principal_of
from bloge.server.problems import problem

if TYPE_CHECKING:
    from bloge.autopilot.rates import ErrorRateWatch

_log = logging.getLogger("bloge.server")
_REFUSED_STATUS = {"self_approval": 403, "expired": 409, "decided": 409, "conflict": 409,
                   "not_found": 404}


class ProposalBody(BaseModel):
    """``POST /autopilot/knobs/{name}/proposals``."""

    model_config = STRICT_BODY

    value: float = Field(allow_inf_nan=False)
    reason: str = Field(default="", max_length=2000)


class VerdictBody(BaseModel):
    """``POST /autopilot/proposals/{id}/reject`` (and approve, which takes no reason)."""

    model_config = STRICT_BODY

    reason: str = Field(default="", max_length=2000)


def _autopilot(request: Request) -> Autopilot | Response:
    found: Autopilot | None = getattr(request.app.state, "autopilot", None)
    if found is None:
        return problem("the autopilot is off: bloge.autopilot.knobs declares no knob",
                       status=404)
    if principal_of(request) is None:  # the guard let it in without a key: a server has none
        return problem("the autopilot's endpoints need an API key: set bloge.server.api-keys",
                       status=403)
    return found


async def list_knobs(request: Request) -> Response:
    """``GET /autopilot/knobs``: every knob, its tier, bounds and current value."""
    pilot = _autopilot(request)
    if isinstance(pilot, Response):
        return pilot
    await pilot.arefresh()
    return JSONResponse({"knobs": [k.to_dict() for k in pilot.knobs()]})


async def propose(request: Request) -> Response:
    """``POST /autopilot/knobs/{name}/proposals``: ``{"value", "reason"?}``; the decision."""
    pilot = _autopilot(request)
    if isinstance(pilot, Response):
        return pilot
    body = await json_body(request, ProposalBody)
    who = principal_of(request)
    assert who is not None  # _autopilot() refused a request without a key
    decision = await pilot.apropose(request.path_params["name"], body.value,
                                    principal=who.name, reason=body.reason)
    return JSONResponse(decision.to_dict())


async def list_proposals(request: Request) -> Response:
    """``GET /autopilot/proposals``: the proposals waiting for approval, oldest first."""
    pilot = _autopilot(request)
    if isinstance(pilot, Response):
        return pilot
    return JSONResponse({"proposals": [p.to_dict() for p in await pilot.aproposals()]})


async def approve(request: Request) -> Response:
    """``POST /autopilot/proposals/{id}/approve``: apply it; never by its proposer."""
    return await _verdict(request, approving=True)


async def reject(request: Request) -> Response:
    """``POST /autopilot/proposals/{id}/reject``: ``{"reason"?}``."""
    return await _verdict(request, approving=False)


async def _verdict(request: Request, *, approving: bool) -> Response:
    pilot = _autopilot(request)
    if isinstance(pilot, Response):
        return pilot
    who = principal_of(request)
    assert who is not None  # _autopilot() refused a request without a key
    proposal_id = request.path_params["proposal_id"]
    body = await json_body(request, VerdictBody, empty_ok=True)
    try:
        if approving:
            decision = await pilot.aapprove(proposal_id, principal=who.name)
            return JSONResponse(decision.to_dict())
        rejected = await pilot.areject(proposal_id, principal=who.name, reason=body.reason)
        return JSONResponse(rejected.to_dict())
    except ProposalNotFoundError as exc:
        return problem(str(exc), status=404, param="proposal_id", code="not_found")
    except ApprovalRefusedError as exc:
        return problem(str(exc), status=_REFUSED_STATUS.get(exc.code, 409), code=exc.code)


@contextlib.asynccontextmanager
async def running(request_app: object, *, refresh_interval: float = 5.0,
                  watches: Sequence[ErrorRateWatch] = ()) -> AsyncIterator[None]:
    """While the server runs: take in other processes' decisions every ``refresh_interval``
    seconds (so an approval made with the CLI applies here), and tick each error-rate watch."""
    pilot: Autopilot | None = getattr(getattr(request_app, "state", None), "autopilot", None)
    if pilot is None:
        yield
        return
    try:
        await pilot.arefresh()  # what was decided while the server was down applies now
    except BlogeError:
        _log.warning("autopilot: could not read the decisions in the store", exc_info=True)
    tasks = [asyncio.create_task(_every(refresh_interval, pilot.arefresh, "refresh"))]
    tasks += [asyncio.create_task(_every(w.interval, w.tick, f"watch {w.knob}"))
              for w in watches]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _every(seconds: float, work: Callable[[], Awaitable[object]], what: str) -> None:
    while True:
        await asyncio.sleep(seconds)
        try:
            await work()
        except BlogeError:  # a store that is down now, say: log it, try again next time
            _log.warning("autopilot %s failed", what, exc_info=True)


ROUTES = [
    Route("/autopilot/knobs", list_knobs, methods=["GET"]),
    Route("/autopilot/knobs/{name}/proposals", propose, methods=["POST"]),
    Route("/autopilot/proposals", list_proposals, methods=["GET"]),
    Route("/autopilot/proposals/{proposal_id}/approve", approve, methods=["POST"]),
    Route("/autopilot/proposals/{proposal_id}/reject", reject, methods=["POST"]),
]
