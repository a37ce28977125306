"""Retries of provider HTTP calls: one policy, and one tenacity ``AsyncRetrying`` per call.

A shared ``AsyncRetrying`` keeps its attempt count in one place, so concurrent calls would
corrupt each other's count (DESIGN.md section 5); :func:`call_with_retries` builds a fresh one
every time it is called.

Before each wait, the observers installed with :func:`observing_retries` (in the current
context: the CLI's spinner, say) are told what failed and how long the wait is.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import random
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from bloge.core.errors import BlogeUsageError, ProviderError
from bloge.llm.attempts import attempt_cap

if TYPE_CHECKING:
    from tenacity import RetryCallState
    from tenacity.retry import retry_base

Sleep: TypeAlias = Callable[[float], Awaitable[None]]
"""How a provider waits between attempts; ``asyncio.sleep`` unless a test injects another."""

T = TypeVar("T")

_log = logging.getLogger("bloge.llm.providers")

# Exponents past this only matter for absurd settings; capping them keeps the float finite.
_MAX_EXPONENT = 64


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a provider retries a failed call (settings ``bloge.llm.retry``, DESIGN.md section 5).

    A call is tried at most ``max_attempts`` times. It is retried after a timeout, a connection
    error, or an HTTP status in ``retry_on_status`` (``on-http-codes``); any other error status
    fails at once. The wait before retry *n* is ``initial_backoff * multiplier ** (n - 1)``
    seconds, capped at ``max_backoff``; with ``jitter`` it is drawn uniformly from the upper half
    of that, so that clients which failed together do not come back together. When the server
    says how long to wait (``retry-after-ms`` or ``Retry-After``), that wins, capped at
    ``max_retry_after``; while another model stands by (:mod:`bloge.llm.attempts`), a longer
    wait is not waited for: the call fails at once and that model answers.

    The default statuses include 529, Anthropic's ``overloaded_error``; OpenAI never sends it,
    but gateways that relay Anthropic-style backends behind an OpenAI API do, so one default
    serves both.

    ``total_timeout`` (seconds, ``None`` for no limit) bounds a whole call: every attempt and
    every wait between them. A wait that would end past it is not slept: the call fails at once,
    saying how long the server asked to wait and how much time was left. For a stream it bounds
    the part that is retried, up to the first byte of the body.
    """

    max_attempts: int = 4
    initial_backoff: float = 1.0
    multiplier: float = 2.0
    max_backoff: float = 30.0
    retry_on_status: tuple[int, ...] = (408, 409, 429, 500, 502, 503, 504, 529)
    max_retry_after: float = 60.0
    jitter: bool = True
    total_timeout: float | None = 600.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise BlogeUsageError(f"max_attempts must be at least 1, got {self.max_attempts}")
        for name in ("initial_backoff", "multiplier", "max_backoff", "max_retry_after"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise BlogeUsageError(f"{name} must be a finite number >= 0, got {value!r}")
        total = self.total_timeout
        if total is not None and not (total > 0 and math.isfinite(total)):
            raise BlogeUsageError(f"total_timeout must be a number > 0 or None, got {total!r}")

    def backoff(self, retry_number: int, *, draw: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry ``retry_number`` (1 for the first retry).

        ``draw`` returns a number in [0, 1) and is only used with ``jitter``.
        """
        exponent = min(max(retry_number - 1, 0), _MAX_EXPONENT)
        ceiling = min(self.max_backoff, self.initial_backoff * self.multiplier**exponent)
        return ceiling * (0.5 + draw() / 2) if self.jitter else ceiling

    def wait(self, retry_number: int, retry_after: float | None) -> float:
        """The wait before retry ``retry_number``: the server's ``retry_after`` when it sent
        one (capped at ``max_retry_after``), else :meth:`backoff`."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        return self.backoff(retry_number)


DEFAULT_RETRY = RetryPolicy()


def retry_after_seconds(headers: Mapping[str, str], *, now: float) -> float | None:
    """How long the server asked us to wait, from ``retry-after-ms`` or ``Retry-After``.

    ``Retry-After`` may be seconds or an HTTP date (compared with ``now``, a POSIX time). Pass
    case-insensitive headers (``httpx.Headers``) or lower-case keys. ``None`` when neither
    header is present or parses.
    """
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def _number(text: str | None) -> float | None:
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """A provider call failed and will be tried again after ``wait`` seconds.

    ``attempt`` is the number of the attempt that failed (1 for the first), of at most
    ``max_attempts``; ``reason`` is ``"HTTP <status>"`` or the transport's error (``"timed
    out"``), ``message`` the server's message, when it sent one.
    """

    provider: str
    attempt: int
    max_attempts: int
    wait: float
    reason: str
    status_code: int | None = None
    message: str = ""


RetryObserver: TypeAlias = Callable[[RetryNotice], None]
"""Told of each retry before its wait; it must return quickly (it runs on the event loop)."""

_observers: ContextVar[tuple[RetryObserver, ...]] = ContextVar("bloge_retry_observers",
                                                               default=())


@contextlib.contextmanager
def observing_retries(observer: RetryObserver) -> Iterator[None]:
    """Tell ``observer`` of every retry of a provider call made in this context (and in the
    tasks it starts) until the ``with`` block ends."""
    token = _observers.set((*_observers.get(), observer))
    try:
        yield
    finally:
        _observers.reset(token)


def _notify(notice: RetryNotice) -> None:
    for observer in _observers.get():
        try:
            observer(notice)
        except Exception:  # noqa: BLE001 -- an observer's bug must not fail the call it watches
            _log.exception("retry observer %r failed", observer)


class AttemptError(Exception):
    """One failed attempt of a provider call, before retries are decided.

    ``retryable`` says whether another attempt may succeed; ``retry_after`` is the server's
    requested wait in seconds; ``request`` the refused request as
    :func:`~bloge.llm.providers.server_errors.request_excerpt` shows it. It never leaves the
    providers package:
    :func:`call_with_retries` turns the last one into a :class:`ProviderError`.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool,
        retry_after: float | None = None,
        request: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.retryable = retryable
        self.retry_after = retry_after
        self.request = request


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    sleep: Sleep,
    provider: str,
) -> T:
    """Await ``attempt()`` until it succeeds, raises a non-retryable :class:`AttemptError`,
    ``policy.max_attempts`` are used up or ``policy.total_timeout`` runs out; then raise a
    :class:`ProviderError` naming ``provider``, the HTTP status and the server's message,
    chained to the transport error.
    """
    # tenacity loads with the first HTTP call: an offline run never makes one.
    from tenacity import AsyncRetrying  # noqa: PLC0415 -- see above

    call = _Call(attempt, policy, provider)
    retrying = AsyncRetrying(stop=call.stop, wait=call.wait, retry=_retryable(), sleep=sleep,
                             before_sleep=call.log_retry, reraise=True)
    try:
        async with asyncio.timeout_at(call.deadline) as budget:
            return await retrying(call.counted)
    except AttemptError as failure:
        raise ProviderError(
            call.message(failure),
            provider=provider,
            status_code=failure.status_code,
            retryable=failure.retryable,
            request=failure.request,
        ) from failure.__cause__
    except TimeoutError as exc:
        if not budget.expired():
            raise
        message = (f"no answer within the call's total_timeout of {policy.total_timeout:g} s "
                   f"({_tried(call.attempts)})")
        raise ProviderError(message, provider=provider, retryable=True) from exc
    finally:
        # The retrying keeps its last actions, methods of its own: a cycle that the collector
        # would free only later, with the call above. Emptied, it goes with this call.
        retrying.iter_state.reset()


class _Call:
    """One call's attempts: what tenacity asks of it (stop, wait, log), and what it counts.

    One object with its methods rather than closures: a streamed call holds them until its
    first byte, and a server holds thousands of streams waiting for theirs.
    """

    __slots__ = ("_attempt", "_loop", "_most", "_policy", "_provider", "_standby", "attempts",
                 "deadline", "outwaited", "refused_with")

    def __init__(self, attempt: Callable[[], Awaitable[Any]], policy: RetryPolicy,
                 provider: str) -> None:
        self._attempt = attempt
        self._policy = policy
        self._provider = provider
        cap = attempt_cap()
        self._most = policy.max_attempts if cap is None else max(1, min(cap, policy.max_attempts))
        # Another model stands by: a wait longer than the policy honours is not waited for.
        self._standby = cap is not None
        self._loop = asyncio.get_running_loop()
        total = policy.total_timeout
        self.deadline = None if total is None else self._loop.time() + total
        self.attempts = 0
        # Seconds left when the budget refused a wait; None while it has refused none.
        self.refused_with: float | None = None
        # Whether the server asked for a wait past max_retry_after while a model stands by.
        self.outwaited = False

    async def counted(self) -> Any:
        self.attempts += 1
        return await self._attempt()

    def wait(self, state: RetryCallState) -> float:
        return self._policy.wait(state.attempt_number, _failure_of(state).retry_after)

    def stop(self, state: RetryCallState) -> bool:
        if state.attempt_number >= self._most:
            return True
        asked = _failure_of(state).retry_after
        if self._standby and asked is not None and asked > self._policy.max_retry_after:
            self.outwaited = True
            return True
        if self.deadline is None:
            return False
        left = self.deadline - self._loop.time()
        if state.upcoming_sleep < left:
            return False
        self.refused_with = max(left, 0.0)
        return True

    def log_retry(self, state: RetryCallState) -> None:
        failure = _failure_of(state)
        pause = state.next_action.sleep if state.next_action else 0.0
        _log.warning(
            "%s: %s; retrying in %.2fs (attempt %d of %d)",
            self._provider,
            _with_status(failure),
            pause,
            state.attempt_number,
            self._most,
        )
        reason = failure.message if failure.status_code is None else f"HTTP {failure.status_code}"
        _notify(RetryNotice(self._provider, state.attempt_number, self._most,
                            pause, reason, failure.status_code,
                            "" if failure.status_code is None else failure.message))

    def message(self, failure: AttemptError) -> str:
        """The last failure's message, with how the attempts ended if there were several or
        the time budget refused a wait."""
        if self.refused_with is not None:
            return failure.message + _refusal(failure, self.attempts, left=self.refused_with,
                                              total=self._policy.total_timeout)
        if self.outwaited:
            return (f"{failure.message}; the server asked to wait {failure.retry_after:g} s "
                    f"before retrying, more than max_retry_after "
                    f"({self._policy.max_retry_after:g} s), and another model stands by "
                    f"({_tried(self.attempts)})")
        if self.attempts > 1:
            return f"{failure.message} ({_tried(self.attempts)})"
        return failure.message


@functools.cache
def _retryable() -> retry_base:
    """tenacity's retry predicate: an :class:`AttemptError` that says another may succeed
    (one for every call: it keeps nothing of a call's)."""
    from tenacity import retry_if_exception  # noqa: PLC0415 -- with the first HTTP call

    return retry_if_exception(lambda exc: isinstance(exc, AttemptError) and exc.retryable)


def _refusal(failure: AttemptError, attempts: int, *, left: float, total: float | None) -> str:
    if failure.retry_after is not None:
        return (
            f"; the server asked to wait {failure.retry_after:g} s before retrying, more than "
            f"the {left:.1f} s left of the call's total_timeout of {total:g} s ({_tried(attempts)})"
        )
    return (
        f" ({_tried(attempts)}: the next attempt would start after the call's total_timeout "
        f"of {total:g} s)"
    )


def _tried(attempts: int) -> str:
    return f"gave up after {attempts} attempt{'s' if attempts > 1 else ''}"


def _failure_of(state: RetryCallState) -> AttemptError:
    # The retry predicate only lets AttemptError through, so waits and logs always see one.
    assert state.outcome is not None
    failure = state.outcome.exception()
    assert isinstance(failure, AttemptError)
    return failure


def _with_status(failure: AttemptError) -> str:
    if failure.status_code is None:
        return failure.message
    return f"HTTP {failure.status_code}: {failure.message}"
