"""Work repeated while a block runs: every so often, stopped with the block, a failure told."""

from __future__ import annotations

import asyncio

import pytest

from bloge.core.repeating import repeating


async def test_work_is_repeated_while_the_body_runs_and_stops_with_it() -> None:
    calls: list[int] = []
    third = asyncio.Event()

    async def work() -> None:
        calls.append(len(calls))
        if len(calls) == 3:
            third.set()

    async with repeating(0, work):
        await third.wait()
    assert asyncio.all_tasks() == {asyncio.current_task()}  # its task has ended
    assert calls[:3] == [0, 1, 2]


async def test_a_body_shorter_than_the_interval_never_runs_the_work() -> None:
    calls: list[str] = []

    async def work() -> None:
        calls.append("ran")

    async with repeating(3600, work):
        pass
    assert calls == []


async def test_a_failure_of_the_work_ends_it_and_is_raised_when_the_body_ends() -> None:
    failed = asyncio.Event()

    async def work() -> None:
        failed.set()
        raise RuntimeError("store down")

    with pytest.raises(RuntimeError, match="store down"):
        async with repeating(0, work):
            await failed.wait()
