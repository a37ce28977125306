"""Errors as responses: one JSON shape for every endpoint, OpenAI's (``{"error": {"message",
"type", "param", "code"}}``), so that the official SDKs read them too."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

#: The ``type`` of an error, by HTTP status, as OpenAI names them.
_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 405: "invalid_request_error", 409: "conflict_error",
          413: "invalid_request_error", 422: "invalid_request_error", 429: "rate_limit_error",
          402: "insufficient_quota",
          503: "server_error", 504: "timeout_error"}


def error_body(message: str, *, status: int, param: str | None = None,
               code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": _TYPES.get(status, "server_error"),
                      "param": param, "code": code}}


def problem(message: str, *, status: int, param: str | None = None, code: str | None = None,
            headers: dict[str, str] | None = None) -> JSONResponse:
    """A JSON error response with its real status."""
    return JSONResponse(error_body(message, status=status, param=param, code=code),
                        status_code=status, headers=headers)
