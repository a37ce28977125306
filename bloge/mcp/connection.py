"""``McpConnection``: one MCP server, started, listed, called — and restarted once.

The session lives on a :class:`~bloge.mcp.portal.Portal`. A server that exits (noticed when
its session ends, or when a call finds the connection closed) is restarted once, in the
background: calls made meanwhile fail with a message saying so, and so does every call after
a second exit, or a restart that fails. A call the server was working on when it exited is
never sent again (it may have done its work): it fails.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from typing import Any, Literal

import httpx2
import mcp_types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from pydantic import ValidationError

from bloge.core.masking import mask_credentials
from bloge.mcp import stdout_noise
from bloge.mcp.errors import McpError
from bloge.mcp.listing import Listing, listing_of
from bloge.mcp.portal import Portal
from bloge.mcp.results import tool_result
from bloge.mcp.spec import McpServerSpec

State = Literal["new", "up", "restarting", "down", "closed"]
_MAX_PAGES = 100
#: Seconds a session has to close before it is cancelled (the SDK bounds each of its own
#: waits: closing stdin, SIGTERM, SIGKILL).
_STOP_WAIT = 10.0


class McpConnection:
    """The MCP server of ``spec``, reached through ``portal``."""

    def __init__(self, spec: McpServerSpec, portal: Portal) -> None:
        self.spec = spec
        self.state: State = "new"
        self.listing = Listing(())
        self._portal = portal
        self._why = ""
        self._restarts = 0
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._session_task: asyncio.Task[None] | None = None
        self._restart: concurrent.futures.Future[None] | None = None
        # The SDK tells an HTTP error status as "an error response": the status, kept here.
        self._http_status: int | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    def start(self) -> Listing:
        """Start the server, initialize its session and list its tools (blocking);
        :class:`McpError` says why it could not."""
        return self.begin().result()

    def begin(self) -> concurrent.futures.Future[Listing]:
        """Start the server in the background: the future of :meth:`start`'s result."""
        return self._portal.submit(self._start())

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        """Call ``tool`` (its name as the server lists it); the tool's result, or
        :class:`McpError` (:class:`~bloge.mcp.errors.McpToolError` for ``isError``)."""
        if self.state == "closed":  # its portal may be gone with it
            raise McpError(self.name, f"is down ({self._why}); its tools fail until the "
                           "application restarts")
        return await self._portal.call(self._call(tool, dict(arguments)))

    def wait_restart(self, timeout: float | None = None) -> None:
        """Wait for a restart under way (if any) to end, whatever its outcome."""
        restart = self._restart
        if restart is not None:
            concurrent.futures.wait([restart], timeout)

    def close(self) -> None:
        """Stop the server (blocking); its calls fail from then on."""
        if self.state == "closed":
            return
        self.state, self._why = "closed", "the application is shutting down"
        self._portal.run(self._end_session(cancel=self._client is None))
        self.wait_restart()

    def describe(self) -> str:
        """The state of the server, in words, for reports."""
        match self.state:
            case "up":
                return f"up, {self.spec.where()}"
            case "restarting":
                return f"restarting after {self._why}"
            case _:
                return f"{self.state}: {self._why}" if self._why else self.state

    # ------------------------------------------------------------------ on the portal loop

    async def _start(self) -> Listing:
        ready: asyncio.Future[Listing] = asyncio.get_running_loop().create_future()
        # Once the start has timed out, nobody waits for it: its outcome is not news.
        ready.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._stop = asyncio.Event()
        self._session_task = asyncio.create_task(self._session(ready, self._stop))
        timeout = self.spec.startup_timeout
        try:
            self.listing = await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            await self._end_session(cancel=True)
            raise McpError(self.name, f"did not answer initialize and list its tools within "
                           f"{timeout:g} s ({self.spec.where()}); raise "
                           f"bloge.mcp.servers.{self.name}.startup-timeout if it is slow") \
                from None
        except McpError:
            await self._end_session(cancel=True)
            raise
        if self.state in ("new", "restarting"):
            self.state, self._why = "up", ""
        return self.listing

    async def _session(self, ready: asyncio.Future[Listing], stop: asyncio.Event) -> None:
        try:
            async with self._connected() as client:
                listing = await self._list(client)
                self._client = client
                ready.set_result(listing)
                await stop.wait()
        except Exception as exc:  # noqa: BLE001 -- whatever ended the session is told to its callers
            problem = self._problem(exc)
            if not ready.done():
                ready.set_exception(problem)
                return
            self._client = None
            if not stop.is_set():
                self._exited(problem.reason)
            return
        finally:
            self._client = None
            if not ready.done():  # ended, or cancelled, before the listing
                ready.set_exception(McpError(self.name, "stopped while it was starting"))

    @contextlib.asynccontextmanager
    async def _connected(self) -> AsyncIterator[Client]:
        spec = self.spec
        async with AsyncExitStack() as stack:
            if spec.transport == "stdio":
                assert spec.command is not None  # McpServerSpec checks it
                server: Any = StdioServerParameters(command=spec.command, args=list(spec.args),
                                                    env=dict(spec.env) or None, cwd=spec.cwd)
                # The SDK's stdout reader task starts inside the client: it inherits this.
                stdout_noise.install()
                stdout_noise.reading.set((self.name, self._text))
            else:
                assert spec.url is not None  # McpServerSpec checks it
                http = await stack.enter_async_context(httpx2.AsyncClient(
                    headers=dict(spec.headers),
                    timeout=httpx2.Timeout(30.0, read=spec.call_timeout or 300.0),
                    event_hooks={"response": [self._remember_status]}))
                server = streamable_http_client(spec.url, http_client=http)
            client = Client(server, read_timeout_seconds=spec.call_timeout, cache=None)
            yield await stack.enter_async_context(client)

    async def _remember_status(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            self._http_status = response.status_code

    def _mcp_problem(self, exc: MCPError) -> str:
        """An MCP error's text, with the HTTP status that caused it when there was one."""
        status, self._http_status = self._http_status, None
        http = f", HTTP {status}" if status is not None else ""
        return f"{self._text(exc.message)} (MCP error {exc.code}{http})"

    async def _list(self, client: Client) -> Listing:
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return listing_of(tools)

    async def _call(self, tool: str, arguments: dict[str, Any]) -> Any:
        client = self._client
        if self.state == "restarting":
            raise McpError(self.name, f"is restarting after {self._why}; its tools are "
                           "unavailable until it is back")
        if self.state in ("down", "closed") or client is None:
            raise McpError(self.name, f"is down ({self._why or 'not started'}); its tools "
                           "fail until the application restarts")
        try:
            result = await client.call_tool(tool, arguments)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                restarting = self._exited(f"it closed the connection (at a call to "
                                          f"{tool!r})")
                then = "it is restarted once" if restarting else (
                    "it was restarted once already: its tools fail until the application "
                    "restarts")
                # Whether the server had the call (and did its work) is unknown: not resent.
                raise McpError(self.name, f"closed the connection before answering the call "
                               f"to {tool!r} (did it exit?); {then}") from None
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise McpError(self.name, f"tool {tool!r} did not answer within "
                               f"{self.spec.call_timeout:g} s (bloge.mcp.servers.{self.name}."
                               "call-timeout)") from None
            raise McpError(self.name, f"tool {tool!r}: {self._mcp_problem(exc)}") from None
        except ValidationError as exc:
            raise McpError(self.name, f"tool {tool!r} answered with a result that is not "
                           f"MCP ({exc.error_count()} problems)") from None
        except Exception as exc:  # noqa: BLE001 -- the SDK's and transports' own failures, translated
            raise McpError(self.name, f"tool {tool!r}: {self._problem(exc).reason}") from None
        return tool_result(self.name, tool, result, max_bytes=self.spec.max_result_bytes)

    def _exited(self, why: str) -> bool:
        """The session ended on its own: restart it once, in the background (whether it
        is restarted)."""
        if self.state != "up":
            return self.state == "restarting"
        if self._restarts >= 1:
            self.state, self._why = "down", f"{why}, again after its restart"
            return False
        self._restarts += 1
        self.state, self._why = "restarting", why
        self._restart = asyncio.run_coroutine_threadsafe(self._restarted(),
                                                         self._portal.loop)
        return True

    async def _restarted(self) -> None:
        await self._end_session()
        if self.state != "restarting":  # closed while the old session ended
            return
        try:
            await self._start()
        except McpError as exc:
            if self.state == "restarting":
                self.state = "down"
                self._why = f"{self._why}, and its restart failed: {exc.reason}"
            return
        if self._closed():  # closed while it restarted
            await self._end_session()

    def _closed(self) -> bool:
        return self.state == "closed"

    async def _end_session(self, *, cancel: bool = False) -> None:
        """End the session: asked to stop (it closes the connection and stops the server's
        process, within the SDK's bounded waits), or cancelled when it is still starting."""
        task, self._session_task = self._session_task, None
        if self._stop is not None:
            self._stop.set()
        if task is None:
            return
        if cancel:
            task.cancel()
        _, pending = await asyncio.wait({task}, timeout=_STOP_WAIT)
        if pending:
            task.cancel()
            await asyncio.wait({task})

    def _problem(self, exc: BaseException) -> McpError:
        """``exc``, which ended a session, as an error naming the server."""
        if isinstance(exc, McpError):
            return exc
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            return self._problem(exc.exceptions[0])
        if isinstance(exc, OSError) and self.spec.transport == "stdio":
            reason = exc.strerror or str(exc)
            return McpError(self.name, f"cannot start {self.spec.command!r}: {reason} "
                            f"(bloge.mcp.servers.{self.name}.command)")
        if isinstance(exc, httpx2.HTTPError):
            return McpError(self.name, f"cannot reach {self.spec.where()}: "
                            f"{self._text(str(exc))}")
        if isinstance(exc, MCPError):
            return McpError(self.name, self._mcp_problem(exc))
        return McpError(self.name, f"{type(exc).__name__}: {self._text(str(exc))}")

    def _text(self, text: str) -> str:
        """Text from the server or the transport, without the configured secrets."""
        for secret in (*self.spec.headers.values(), *self.spec.env.values()):
            if secret:
                text = text.replace(secret, "****")
        return mask_credentials(text)
