"""The business code the RPC tests run over every transport: an inventory service."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pydantic import BaseModel

from bloge import rpc


class Reservation(BaseModel):
    sku: str
    quantity: int
    left: int


@dataclass(frozen=True, slots=True)
class Item:
    sku: str
    tags: tuple[str, ...] = ()


@runtime_checkable
class Inventory(Protocol):
    @rpc.idempotent
    async def stock(self, sku: str) -> int:
        """How many of ``sku`` are left."""
        ...

    async def reserve(self, sku: str, quantity: int = 1) -> Reservation:
        """Take ``quantity`` of ``sku``: not idempotent."""
        ...

    async def items(self, tag: str | None = None) -> list[Item]:
        ...

    async def echo(self, value: object) -> object:
        ...

    async def hang(self) -> None:
        """Waits until cancelled (for deadlines)."""
        ...

    async def whoami(self) -> dict[str, str]:
        """The metadata the call arrived with."""
        ...

    async def explode(self, kind: str) -> None:
        ...


@dataclass
class Shelf:
    """An implementation keeping count of the work it did."""

    counts: dict[str, int] = field(default_factory=lambda: {"apple": 5, "pear": 1})
    reservations: int = 0
    hanging: threading.Event = field(default_factory=threading.Event)
    cancelled: threading.Event = field(default_factory=threading.Event)

    async def stock(self, sku: str) -> int:
        if sku not in self.counts:
            raise rpc.RemoteError("not_found", f"no item {sku!r}", {"sku": sku})
        return self.counts[sku]

    async def reserve(self, sku: str, quantity: int = 1) -> Reservation:
        self.reservations += 1
        if self.counts.get(sku, 0) < quantity:
            raise ValueError(f"only {self.counts.get(sku, 0)} {sku} left")
        self.counts[sku] -= quantity
        return Reservation(sku=sku, quantity=quantity, left=self.counts[sku])

    async def items(self, tag: str | None = None) -> list[Item]:
        every = [Item(sku, ("fruit",)) for sku in sorted(self.counts)]
        return [item for item in every if tag is None or tag in item.tags]

    async def echo(self, value: object) -> object:
        return value

    async def hang(self) -> None:
        self.hanging.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise

    async def whoami(self) -> dict[str, str]:
        call = rpc.current_call()
        assert call is not None
        return dict(call.metadata)

    async def explode(self, kind: str) -> None:
        if kind == "secret":
            raise RuntimeError("password=hunter2 at /srv/app/secret.py line 3")
        raise KeyError(kind)
