"""``RemoteError``: a call that failed, with a code both sides of every transport agree on.

The codes are a small subset of the Connect protocol's (gRPC's names in snake case), each
with the HTTP status the HTTP transport answers with:

=====================  ======  ==========================================================
code                   status  meaning
=====================  ======  ==========================================================
``invalid_argument``   400     the arguments (or a result) do not fit the declared types
``unauthenticated``    401     no valid credentials
``permission_denied``  403     credentials valid, call not allowed
``not_found``          404     no such service or method
``resource_exhausted`` 429     over a limit: payload size (HTTP 413 maps here too), load
``internal``           500     the implementation failed; the message names no details
``unavailable``        503     the service cannot be reached now; safe to retry
``deadline_exceeded``  504     the deadline passed before the reply
=====================  ======  ==========================================================
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from bloge.core.errors import BlogeError

ErrorCode = Literal["invalid_argument", "unauthenticated", "permission_denied", "not_found",
                    "resource_exhausted", "internal", "unavailable", "deadline_exceeded"]
CODES: frozenset[str] = frozenset(get_args(ErrorCode))

#: The HTTP status of each code.
HTTP_STATUS: dict[str, int] = {
    "invalid_argument": 400, "unauthenticated": 401, "permission_denied": 403,
    "not_found": 404, "resource_exhausted": 429, "internal": 500, "unavailable": 503,
    "deadline_exceeded": 504,
}

#: The code of an HTTP status that did not come with a body of ours (a proxy's, the guard's).
_STATUS_CODE: dict[int, ErrorCode] = {
    400: "invalid_argument", 401: "unauthenticated", 403: "permission_denied",
    404: "not_found", 408: "deadline_exceeded", 413: "resource_exhausted",
    429: "resource_exhausted", 500: "internal", 502: "unavailable", 503: "unavailable",
    504: "deadline_exceeded",
}

#: What a caller may retry: the call did not run, or its outcome is unknown.
RETRYABLE: frozenset[str] = frozenset({"unavailable", "deadline_exceeded"})


class RemoteError(BlogeError):
    """A remote (or in-process) call failed: ``code`` (one of :data:`ErrorCode`), a
    ``message`` for people, and JSON ``details`` (for ``invalid_argument``, the ``errors``
    with the field each one is about)."""

    def __init__(self, code: ErrorCode, message: str,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code: ErrorCode = code
        self.message = message
        self.details: dict[str, Any] = details or {}

    @property
    def retryable(self) -> bool:
        return self.code in RETRYABLE

    def to_json(self) -> str:
        """The error on the wire: ``{"code", "message", "details"}``."""
        return json.dumps({"code": self.code, "message": self.message,
                           "details": self.details})

    @classmethod
    def from_json(cls, text: str | bytes, *, status: int | None = None) -> RemoteError:
        """The error a body says; from ``status`` alone when the body is not one of ours."""
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("code") in CODES:
            details = body.get("details")
            return cls(body["code"], str(body.get("message", "")),
                       details if isinstance(details, dict) else None)
        message = _foreign_message(body) or f"HTTP status {status}"
        return cls(code_of_status(status), message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.code, self.message, self.details))


def code_of_status(status: int | None) -> ErrorCode:
    if status is None:
        return "internal"
    if status in _STATUS_CODE:
        return _STATUS_CODE[status]
    return "unavailable" if status >= 500 else "internal"


def _foreign_message(body: object) -> str | None:
    """The message of another error shape, such as the server guard's OpenAI-style one."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return None


def outcome_unknown(where: str) -> RemoteError:
    """What a repeat of a keyed call is told when the first run stopped before it answered
    (its deadline passed, its process or replica stopped): ``unavailable``, and it is not
    run again, since it may have done its work."""
    return RemoteError("unavailable", f"{where}: the call with this idempotency key stopped "
                       "before it answered; the outcome is unknown, so it is not run again")
