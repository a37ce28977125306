"""The circuit breakers of fallback models, shared through the store: every worker on one
store counts the same failures, and one worker's open breaker is every worker's."""

from __future__ import annotations

import asyncio

from bloge.llm.breaker import CLOSED, CircuitBreaker
from bloge.store import StoreBreakerStates, open_store

ROUTE = "openai@api.openai.com:gpt-4o"


async def test_a_breaker_opened_by_one_worker_is_open_for_another(store_url: str) -> None:
    now = [1000.0]
    async with open_store(store_url) as first, open_store(store_url) as second:
        one = CircuitBreaker(failures=2, cooldown=30.0, states=StoreBreakerStates(first),
                             clock=lambda: now[0])
        other = CircuitBreaker(failures=2, cooldown=30.0, states=StoreBreakerStates(second),
                               clock=lambda: now[0])
        if store_url == "memory://":
            other = one  # two memory stores are two databases
        assert not await one.failed(ROUTE)
        assert await other.failed(ROUTE)
        assert other.open_for(await one.state(ROUTE)) == 30.0
        now[0] += 30.0
        assert one.open_for(await other.state(ROUTE)) == 0.0


async def test_a_success_closes_the_shared_breaker(store_url: str) -> None:
    async with open_store(store_url) as store:
        breaker = CircuitBreaker(failures=1, states=StoreBreakerStates(store))
        assert await breaker.failed(ROUTE)
        await breaker.succeeded(ROUTE, await breaker.state(ROUTE))
        assert await breaker.state(ROUTE) == CLOSED


async def test_concurrent_failures_are_all_counted(durable_store_url: str) -> None:
    async with open_store(durable_store_url) as store:
        states = StoreBreakerStates(store)
        opened = await asyncio.gather(*(states.failed(ROUTE, failures=10, until=5.0)
                                        for _ in range(10)))
        state = await states.state(ROUTE)
    assert state.failures == 10
    assert opened.count(True) == 1
    assert state.open_until == 5.0
