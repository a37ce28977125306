"""RetryPolicy's waits, Retry-After parsing, and one retry state per call."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from bloge.core import BlogeUsageError, ProviderError
from bloge.llm.providers import RetryPolicy, retry_after_seconds
from bloge.llm.providers.retry import AttemptError, call_with_retries
from tests.llm.providers.conftest import RecordedSleeps

NOW = datetime(2025, 3, 10, 12, 0, 0, tzinfo=UTC).timestamp()


def test_defaults_match_the_retry_settings_of_the_design() -> None:
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.initial_backoff, policy.multiplier, policy.max_backoff) == (
        4, 1.0, 2.0, 30.0)
    assert policy.retry_on_status == (408, 409, 429, 500, 502, 503, 504, 529)
    assert (policy.max_retry_after, policy.jitter, policy.total_timeout) == (60.0, True, 600.0)


def test_backoff_grows_exponentially_up_to_the_cap() -> None:
    policy = RetryPolicy(jitter=False)
    assert [policy.backoff(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_backoff_of_a_huge_retry_number_stays_at_the_cap() -> None:
    assert RetryPolicy(jitter=False).backoff(10_000) == 30


def test_jitter_draws_from_the_upper_half_of_the_backoff() -> None:
    policy = RetryPolicy(initial_backoff=4.0)
    assert policy.backoff(1, draw=lambda: 0.0) == 2.0
    assert policy.backoff(1, draw=lambda: 0.5) == 3.0
    assert policy.backoff(1, draw=lambda: 0.999999) == pytest.approx(4.0)


def test_a_server_requested_wait_wins_over_the_backoff_within_its_cap() -> None:
    policy = RetryPolicy(jitter=False, max_retry_after=60.0)
    assert policy.wait(1, 7.5) == 7.5
    assert policy.wait(1, 600.0) == 60.0
    assert policy.wait(3, None) == 4.0


@pytest.mark.parametrize("field", ["initial_backoff", "multiplier", "max_backoff",
                                   "max_retry_after", "total_timeout"])
def test_negative_durations_are_a_usage_error(field: str) -> None:
    with pytest.raises(BlogeUsageError, match=field):
        RetryPolicy(**{field: -1.0})


def test_a_total_timeout_of_zero_is_a_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match="total_timeout must be a number > 0 or None"):
        RetryPolicy(total_timeout=0.0)


def test_fewer_than_one_attempt_is_a_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


def test_retry_after_in_seconds() -> None:
    assert retry_after_seconds({"retry-after": "7"}, now=NOW) == 7.0


def test_retry_after_ms_wins_over_retry_after() -> None:
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "7"}, now=NOW) == 1.5


def test_retry_after_as_an_http_date_counts_from_now() -> None:
    when = format_datetime(datetime(2025, 3, 10, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert when == "Mon, 10 Mar 2025 12:00:30 GMT"
    assert retry_after_seconds({"retry-after": when}, now=NOW) == 30.0


def test_retry_after_as_a_past_http_date_means_now() -> None:
    assert retry_after_seconds({"retry-after": "Mon, 10 Mar 2025 11:00:00 GMT"}, now=NOW) == 0.0


@pytest.mark.parametrize("headers", [{}, {"retry-after": "soon"}, {"retry-after": "-3"},
                                     {"retry-after-ms": "nan"}, {"retry-after": ""}])
def test_missing_or_unreadable_retry_after_is_none(headers: dict[str, str]) -> None:
    assert retry_after_seconds(headers, now=NOW) is None


async def test_each_call_counts_its_own_attempts_under_concurrency(
    sleeps: RecordedSleeps,
) -> None:
    policy = RetryPolicy(max_attempts=3, jitter=False)
    attempts: dict[str, int] = {"a": 0, "b": 0}
    in_step = asyncio.Barrier(2)

    async def lockstep_sleep(seconds: float) -> None:
        await sleeps(seconds)
        await in_step.wait()  # neither call tries again before the other failed as often

    def flaky(name: str) -> Callable[[], Awaitable[str]]:  # fails twice, then succeeds
        async def attempt() -> str:
            attempts[name] += 1
            if attempts[name] < 3:
                raise AttemptError("busy", status_code=503, retryable=True)
            return name
        return attempt

    results = await asyncio.gather(
        *(call_with_retries(flaky(n), policy=policy, sleep=lockstep_sleep, provider="test")
          for n in ("a", "b")))
    assert results == ["a", "b"]
    assert attempts == {"a": 3, "b": 3}
    assert sorted(sleeps) == [1.0, 1.0, 2.0, 2.0]


async def test_the_last_failure_becomes_a_provider_error_naming_the_attempts(
    sleeps: RecordedSleeps,
) -> None:
    async def attempt() -> None:
        raise AttemptError("Overloaded", status_code=503, retryable=True)

    with pytest.raises(ProviderError) as caught:
        await call_with_retries(attempt, policy=RetryPolicy(max_attempts=2, jitter=False),
                                sleep=sleeps, provider="test")
    assert str(caught.value) == "test (HTTP 503): Overloaded (gave up after 2 attempts)"
    assert (caught.value.status_code, caught.value.retryable) == (503, True)


async def test_the_total_timeout_ends_an_attempt_that_never_answers(
    sleeps: RecordedSleeps,
) -> None:
    async def attempt() -> None:
        await asyncio.Event().wait()

    with pytest.raises(ProviderError) as caught:
        await call_with_retries(attempt, policy=RetryPolicy(total_timeout=0.05), sleep=sleeps,
                                provider="test")
    assert str(caught.value) == (
        "test: no answer within the call's total_timeout of 0.05 s (gave up after 1 attempt)")
    assert isinstance(caught.value.__cause__, TimeoutError)


async def test_a_call_leaves_nothing_for_the_collector(sleeps: RecordedSleeps) -> None:
    failures = [AttemptError("busy", status_code=503, retryable=True)]

    async def attempt() -> str:
        if failures:
            raise failures.pop()
        return "ok"

    gc.collect()
    gc.disable()
    try:
        answer = await call_with_retries(attempt, policy=RetryPolicy(jitter=False),
                                         sleep=sleeps, provider="test")
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [type(thing).__name__ for thing in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert answer == "ok"
    assert "AsyncRetrying" not in left
