"""Who made a request, as the :class:`~bloge.server.guard.Guard` found it, and what it may
see: with API keys, a thread or a run belongs to the principal whose key created it, and
another key is told it does not exist; an admin key (``bloge.server.admin-keys``) sees all.
Without keys (the loopback default), every request sees everything, as one user would."""

from __future__ import annotations

import hashlib

from starlette.requests import HTTPConnection

from bloge.core.context import OperatorContext, Principal

#: Where the guard leaves the request's principal in the ASGI scope.
SCOPE_KEY = "bloge.principal"


def key_principal(key: str) -> str:
    """The principal of an API key: ``key:`` and the first 12 hex digits of its SHA-256,
    the same in every process and log, never the key itself."""
    return "key:" + hashlib.sha256(key.encode()).hexdigest()[:12]


def principal_of(connection: HTTPConnection) -> Principal | None:
    """Who made the request: the principal of its valid API key, or ``None`` (a server
    without keys; a public endpoint asked without one)."""
    found: Principal | None = connection.scope.get(SCOPE_KEY)
    return found


def owner_filter(connection: HTTPConnection) -> str | None:
    """Whose threads and runs the request may see (the store's ``owner=``): ``None`` for all
    (an admin key, or a server without keys), else its principal's own."""
    principal = principal_of(connection)
    return None if principal is None or principal.admin else principal.name


def run_context(connection: HTTPConnection) -> OperatorContext | None:
    """The context a run the request starts runs in: it carries the principal, whom the run
    and a new thread belong to and on whose behalf its tools act."""
    principal = principal_of(connection)
    return None if principal is None else OperatorContext.root(principal=principal)
