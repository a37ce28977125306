"""``LoopClients``: one ``httpx.AsyncClient`` per event loop, for a provider that owns its client.

DESIGN. An ``AsyncClient``'s pooled connections belong to the event loop that opened them;
used from another loop they fail ("Event loop is closed", "… is bound to a different event
loop"), and keep failing. bloge's sync facades all share one loop, but user code may still
drive one provider from several loops — ``asyncio.run(operator.execute(...))`` twice, tests
with a loop each, threads with loops of their own. So a provider keeps one client per loop,
created on first use in that loop, and connections are reused within each loop.

A client must not outlive its loop: its connections would hold the loop (and their sockets)
forever. So each client comes with a small async generator that the loop itself closes at
its shutdown — ``asyncio.run()``, ``asyncio.Runner`` and pytest-asyncio all call
``loop.shutdown_asyncgens()`` — and whose ``finally`` closes the client while the loop can
still run it. A loop closed without that step is forgotten when the next client is made; its
sockets are then released by the garbage collector.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable

import httpx


class LoopClients:
    """The clients ``factory`` made, one per event loop that used them."""

    __slots__ = ("_clients", "_factory", "_lock")

    def __init__(self, factory: Callable[[], httpx.AsyncClient]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._clients: dict[asyncio.AbstractEventLoop, _Owned] = {}

    async def current(self) -> httpx.AsyncClient:
        """The running loop's client, made on first use."""
        loop = asyncio.get_running_loop()
        owned = self._clients.get(loop)
        if owned is None:
            owned = await self._open(loop)
        return owned.client

    async def aclose(self) -> None:
        """Close every client: the running loop's here, another running loop's on that loop.

        A loop that is open but not running closes its client at its own shutdown; a later
        use on any loop makes a new client.
        """
        current = asyncio.get_running_loop()
        with self._lock:
            owned = list(self._clients.items())
        for loop, entry in owned:
            if loop is current:
                await entry.close()
            elif loop.is_running():
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(entry.close(), loop))
            elif loop.is_closed():
                self._forget(loop, entry)

    async def _open(self, loop: asyncio.AbstractEventLoop) -> _Owned:
        client = self._factory()
        owned = _Owned(client)
        owned.closer = self._closer(loop, owned)
        await anext(owned.closer)  # first iteration: the loop now tracks the generator
        with self._lock:
            for stale in [other for other in self._clients if other.is_closed()]:
                del self._clients[stale]
            self._clients[loop] = owned
        return owned

    async def _closer(
        self, loop: asyncio.AbstractEventLoop, owned: _Owned
    ) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            self._forget(loop, owned)
            await owned.client.aclose()

    def _forget(self, loop: asyncio.AbstractEventLoop, owned: _Owned) -> None:
        with self._lock:
            if self._clients.get(loop) is owned:
                del self._clients[loop]


class _Owned:
    """One loop's client and the generator that closes it at the loop's shutdown."""

    __slots__ = ("client", "closer")

    closer: AsyncGenerator[None, None]

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def close(self) -> None:
        await self.closer.aclose()
