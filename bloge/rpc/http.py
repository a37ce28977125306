"""``HttpTransport``: calls as ``POST {base_url}/rpc/{service}/{method}`` with httpx.

The body is the JSON payload; the deadline travels as ``Bloge-Timeout-Ms``, metadata as
headers of their own names, the key as ``Authorization: Bearer``. A reply is the JSON result
(200) or ``{"code", "message", "details"}`` with the code's status (see
:mod:`bloge.rpc.errors`). Connections are kept alive and shared by concurrent calls.
"""

from __future__ import annotations

from typing import Self

import httpx

from bloge.core.masking import mask_url_credentials
from bloge.core.tracecontext import with_trace_headers
from bloge.rpc.calls import Metadata, check_metadata, reply_wait
from bloge.rpc.errors import RemoteError

_JSON = "application/json"


class HttpTransport:
    """Calls services served at ``base_url`` (a ``bloge serve``, or anything mounting
    :func:`bloge.rpc.asgi.rpc_app`). ``api_key`` is sent as a bearer token; ``timeout``
    bounds a call that has no deadline. Pass ``client`` to use your own ``httpx.AsyncClient``
    (it is then yours to close); otherwise close the transport with ``aclose()``."""

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = 60.0,
                 client: httpx.AsyncClient | None = None, max_connections: int = 100) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"HttpTransport needs an http:// or https:// URL, got "
                             f"{mask_url_credentials(base_url)!r}")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._headers = {"content-type": _JSON, "accept": _JSON}
        if api_key:
            self._headers["authorization"] = f"Bearer {api_key}"
        self._owned = client is None
        self._client = client or httpx.AsyncClient(limits=httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections))

    async def send(self, service: str, method: str, payload: str, *,
                   deadline: float | None = None, metadata: Metadata | None = None) -> str:
        headers = {**check_metadata(metadata), **self._headers}
        wait = reply_wait(service, method, deadline, headers, self.timeout)
        url = f"{self.base_url}/rpc/{service}/{method}"
        try:
            response = await self._client.post(url, content=payload.encode(),
                                               headers=with_trace_headers(headers), timeout=wait)
        except httpx.ConnectError as exc:
            raise RemoteError("unavailable", f"{service}.{method}: cannot connect to "
                              f"{self._shown()} ({type(exc).__name__})") from exc
        except httpx.TimeoutException as exc:
            raise RemoteError("deadline_exceeded", f"{service}.{method}: no reply from "
                              f"{self._shown()} within {wait:.3g}s") from exc
        except httpx.TransportError as exc:
            raise RemoteError("unavailable", f"{service}.{method}: the connection to "
                              f"{self._shown()} failed ({type(exc).__name__}); the outcome "
                              "is unknown") from exc
        if response.status_code == 200:
            return response.text
        raise RemoteError.from_json(response.content, status=response.status_code)

    def _shown(self) -> str:
        return mask_url_credentials(self.base_url)

    async def aclose(self) -> None:
        if self._owned:
            await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"HttpTransport({self._shown()!r})"
