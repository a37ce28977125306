"""Running an agent's guards: the input guards before (or alongside) the run's first model
call, the output guards on each final answer, the tool-call guards before each call runs.

The engine calls in at three places and learns one of three things: go on; refuse this
answer or call (the guard's ``action = "reject"``: the model is told, and goes on); or stop —
:class:`GuardTripped`, which the engine turns into a
:class:`~bloge.agent.loop.errors.GuardrailTrippedError` with the run's checkpoint. Every
verdict is an ``on_agent_guard_checked`` callback (the journal's and the run store's event,
the server's metric).
"""

from __future__ import annotations

import asyncio
import reprlib
import time
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from bloge.agent.guards.builtin import BUILTIN_GUARDS
from bloge.agent.guards.model import GuardCheck, GuardDef, GuardKind, GuardVerdict
from bloge.agent.listeners import AgentCallbackContext, GuardCheckedPayload, ListenerChain
from bloge.agent.loop.arguments import ArgumentsError, parse_arguments
from bloge.agent.loop.chunks import AgentStreamChunk
from bloge.agent.loop.tools import ChunkSink
from bloge.core.codec import JsonCodec
from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.core.masking import mask_credentials
from bloge.core.operator import BoundOperator, bind
from bloge.core.registry import OperatorRegistry
from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.types import LlmResponse

if TYPE_CHECKING:
    from bloge.agent.loop.observer import RunObserver

_T = TypeVar("_T")

#: The most a verdict repeats of what a failing guard raised, in characters.
MAX_FAILURE = 300

#: The assistant message that stands in the conversation for an answer a guard refused: the
#: refused text itself is never kept (it may be what the guard keeps out of the store).
WITHHELD = "[answer withheld: refused by output guard {name!r}]"


class GuardTripped(Exception):  # noqa: N818 -- a control-flow signal inside the engine, not an error
    """A guard stopped the run (caught by the engine). ``turns_done`` is the turn count its
    checkpoint keeps: the turn whose input or answer tripped does not count."""

    def __init__(self, guard: GuardDef, verdict: GuardVerdict, *, turns_done: int,
                 tool_name: str | None = None) -> None:
        super().__init__(guard.name)
        self.guard = guard
        self.verdict = verdict
        self.turns_done = turns_done
        self.tool_name = tool_name


@dataclass(frozen=True, slots=True)
class _Armed:
    """One guard, its check bound once."""

    definition: GuardDef
    operator: BoundOperator | None


class AgentGuards:
    """An agent's guards, bound once per engine (``None`` when it has none, so that a run
    without guards pays nothing)."""

    __slots__ = ("input", "output", "parallel", "tool_call")

    def __init__(self, guards: Sequence[GuardDef], registry: OperatorRegistry) -> None:
        armed = [_Armed(guard, _operator(guard, registry)) for guard in guards]
        self.input = tuple(a for a in armed if a.definition.kind == "input"
                           and not a.definition.parallel)
        self.parallel = tuple(a for a in armed if a.definition.kind == "input"
                              and a.definition.parallel)
        self.output = tuple(a for a in armed if a.definition.kind == "output")
        self.tool_call = tuple(a for a in armed if a.definition.kind == "tool_call")

    @classmethod
    def of(cls, guards: Sequence[GuardDef], registry: OperatorRegistry) -> AgentGuards | None:
        return cls(guards, registry) if guards else None

    @property
    def checks_input(self) -> bool:
        """Whether there are input guards (sequential or parallel)."""
        return bool(self.input or self.parallel)


def _operator(guard: GuardDef, registry: OperatorRegistry) -> BoundOperator | None:
    if guard.check is not None:
        return bind(f"guard:{guard.name}", guard.check)
    ref = guard.operator_ref
    if ref is None:
        return None
    if ref in registry:
        return registry.bound(ref, purpose=f"operator for {guard.label}")
    builtin = BUILTIN_GUARDS.get(ref)
    if builtin is None:
        # The registry's own error: it names the operator and the closest registered names.
        registry.bound(ref, purpose=f"operator for {guard.label}")
        raise BlogeUsageError(f"{guard.label} refers to operator {ref!r}, which is not registered")
    return bind(ref, builtin(**guard.options))


class RunGuards:
    """The guards of one run."""

    __slots__ = ("_agent_id", "_codec", "_context", "_ctx", "_guards", "_listeners",
                 "_observer", "input_pending")

    def __init__(self, guards: AgentGuards, *, agent_id: str, ctx: OperatorContext,
                 codec: JsonCodec, listeners: ListenerChain, context: AgentCallbackContext,
                 observer: RunObserver | None) -> None:
        self._guards = guards
        self._agent_id = agent_id
        self._ctx = ctx
        self._codec = codec
        self._listeners = listeners
        self._context = context
        self._observer = observer
        #: The run's new input is still to be checked (at its first model call).
        self.input_pending = guards.checks_input

    # -- input

    async def check_input(self, turn: int, new_input: Sequence[LlmMessage]) -> str | None:
        """Check the run's new input (the user messages ending ``new_input``, what the run
        was given: never the conversation before it, nor a note of bloge's own) with the
        sequential input guards, at the run's first model call; the text for the parallel
        ones, or ``None`` when there is nothing for them to do."""
        self.input_pending = False
        text = _new_input(new_input)
        if text is None:
            return None
        for guard in self._guards.input:
            await self._judge(guard, self._check(guard, "input", turn, text), turn - 1)
        return text if self._guards.parallel else None

    async def race(self, answer: Awaitable[_T], turn: int, text: str,
                   held: HeldChunks | None) -> _T:
        """``answer`` (the model call) with the parallel input guards alongside: the answer
        once they all passed; when one trips, the call is cancelled (or its answer dropped)
        and :class:`GuardTripped` raised. The chunks it streams wait in ``held`` until the
        guards passed (and the output guards, when there are some)."""
        call = asyncio.ensure_future(answer)  # the guards run in this task meanwhile
        try:
            await self._parallel(turn, text)  # a trip raises here, before the answer is read
            if held is not None and not self._guards.output:
                await held.release()  # shown from now on as they come
            return await call
        finally:
            if not call.done():
                call.cancel()
                await asyncio.gather(call, return_exceptions=True)

    async def _parallel(self, turn: int, text: str) -> None:
        """The parallel input guards, together; the first trip raises (the others are
        cancelled)."""
        guards = self._guards.parallel
        if len(guards) == 1:
            await self._judge(guards[0], self._check(guards[0], "input", turn, text), turn - 1)
            return
        checks = [asyncio.ensure_future(self._judge(guard, self._check(guard, "input", turn,
                                                                       text), turn - 1))
                  for guard in guards]
        try:
            for finished in asyncio.as_completed(checks):
                await finished
        finally:
            for check in checks:
                check.cancel()
            await asyncio.gather(*checks, return_exceptions=True)

    # -- output

    def held(self, sink: ChunkSink | None, *, racing: bool) -> HeldChunks | None:
        """Where a streamed answer's chunks wait while guards judge (the output guards, or
        the parallel input guards when ``racing``); ``None``: straight to ``sink``."""
        if sink is None or not (self._guards.output or racing):
            return None
        return HeldChunks(sink)

    def checks_output(self, response: LlmResponse) -> bool:
        """Whether ``response`` is a final answer for the output guards to check."""
        return bool(self._guards.output) and not response.tool_calls

    async def check_output(self, turn: int, content: str) -> tuple[str, str] | None:
        """Check a final answer: ``None`` when it may stand, else the name of the guard that
        refused it (``action = "reject"``) and the message asking the model for another."""
        for guard in self._guards.output:
            verdict = await self._judge(guard, self._check(guard, "output", turn, content),
                                        turn - 1)
            if verdict is not None:
                name = guard.definition.name
                return name, (f"Your answer was refused by the output guard {name!r}: "
                              f"{verdict.reason or 'it tripped'}. Answer again, within that "
                              "rule.")
        return None

    # -- tool calls

    async def refusal(self, turn: int, call: ToolCall) -> str | None:
        """Check one tool call before it runs: ``None`` when it may run, else the error
        content the model receives instead of its result."""
        try:
            arguments: Mapping[str, Any] | None = parse_arguments(call.arguments, self._codec)
        except ArgumentsError:
            arguments = None  # the dispatcher tells the model; the guards see null
        for guard in self._guards.tool_call:
            check = self._check(guard, "tool_call", turn, call.arguments, call=call,
                                arguments=arguments)
            verdict = await self._judge(guard, check, turn, tool_name=call.name)
            if verdict is not None:
                return (f"Error: the call of tool {call.name!r} was refused by the guard "
                        f"{guard.definition.name!r}: {verdict.reason or 'it tripped'}")
        return None

    @property
    def checks_tools(self) -> bool:
        """Whether there are tool-call guards (see :mod:`bloge.agent.loop.guarded_round`)."""
        return bool(self._guards.tool_call)

    # -- judging

    def _check(self, guard: _Armed, kind: GuardKind, turn: int, text: str, *,
               call: ToolCall | None = None,
               arguments: Mapping[str, Any] | None = None) -> GuardCheck:
        definition = guard.definition
        return GuardCheck(kind, definition.name, self._agent_id, turn, text,
                          tool_name=None if call is None else call.name,
                          tool_args=arguments, call_id=None if call is None else call.id,
                          options=definition.options)

    async def _judge(self, guard: _Armed, check: GuardCheck, turns_done: int, *,
                     tool_name: str | None = None) -> GuardVerdict | None:
        """Run one guard: ``None`` when it passes, its verdict when it rejects; raise
        :class:`GuardTripped` when it trips with ``action = "trip"``."""
        started = time.perf_counter()
        definition = guard.definition
        error: BaseException | None = None
        try:
            # An expression guard is judged on the spot: no coroutine of its own.
            verdict = (_when_verdict(definition, check) if guard.operator is None
                       else await _verdict(guard, check, self._ctx))
        except Exception as exc:  # noqa: BLE001 -- a failing guard counts by its on_error
            error = exc
            failed = f"the guard failed ({_failure(exc)})"
            verdict = (GuardVerdict(tripped=False, reason=f"{failed}; it fails open")
                       if definition.on_error == "pass"
                       else GuardVerdict.trip(f"{failed} and guards fail closed"))
        if verdict is None:
            return None  # its when does not hold here: nothing to judge
        label = "pass" if not verdict.tripped else definition.action
        if "on_agent_guard_checked" in self._listeners.wanted:
            self._listeners.notify("on_agent_guard_checked", self._context, GuardCheckedPayload(
                check.turn, definition.name, definition.kind, label, verdict.reason,
                (time.perf_counter() - started) * 1000.0, check.call_id, check.tool_name,
                None if error is None else type(error).__name__,
                dict(verdict.findings) or None,
            ))
        if not verdict.tripped:
            return None
        if definition.action == "reject":
            return verdict
        raise GuardTripped(definition, verdict, turns_done=turns_done, tool_name=tool_name)


def _when_verdict(definition: GuardDef, check: GuardCheck) -> GuardVerdict:
    """What an expression guard (``when`` alone) says of ``check``: it trips when it holds."""
    when = definition.when
    assert when is not None  # a guard without a check or an operator has a when
    if when.evaluate(check.scope()):
        return GuardVerdict.trip(f"{when.source} holds")
    return GuardVerdict.passed()


async def _verdict(guard: _Armed, check: GuardCheck, ctx: OperatorContext) -> GuardVerdict | None:
    """What ``guard`` (one with a check or an operator) says of ``check``; ``None`` when its
    ``when`` leaves ``check`` to others."""
    definition = guard.definition
    if definition.when is not None and not definition.when.evaluate(check.scope()):
        return None
    assert guard.operator is not None  # checked by the caller
    result = await guard.operator.invoke(check, ctx)
    if isinstance(result, GuardVerdict):
        return result
    if result is None or result is False:
        return GuardVerdict.passed()
    if result is True:
        return GuardVerdict.trip("")
    raise TypeError(f"a guard returns a GuardVerdict, a bool or None; it returned "
                    f"{reprlib.repr(result)} ({type(result).__name__})")


def _failure(exc: Exception) -> str:
    """What a guard that raised ``exc`` says of its failure: the exception's type and
    message on one line, credentials masked, at most :data:`MAX_FAILURE` characters (a
    verdict's reason is recorded, and may be told to the model)."""
    message = " ".join(mask_credentials(str(exc)).split())
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= MAX_FAILURE else text[:MAX_FAILURE - 1] + "…"


def _new_input(messages: Sequence[LlmMessage]) -> str | None:
    """The text of the user messages that end ``messages`` (a run's new input), or ``None``
    when they do not end with one (a resumed run given nothing new, a ``/v1`` client's tool
    results)."""
    texts: list[str] = []
    for message in reversed(messages):
        if message.role != "user":
            break
        texts.append(message.content or "")
    return "\n".join(reversed(texts)) if texts else None


class HeldChunks:
    """A streamed answer's chunks, held until the guards passed it: an answer a guard
    refused, or one a parallel input guard discarded, is shown to no one (its chunks are
    dropped). With output guards an answer is shown only once it is whole."""

    __slots__ = ("_chunks", "_open", "_sink")

    def __init__(self, sink: ChunkSink) -> None:
        self._sink = sink
        self._chunks: list[AgentStreamChunk] = []
        self._open = False

    async def __call__(self, chunk: AgentStreamChunk) -> None:
        if self._open:
            await self._sink(chunk)
        else:
            self._chunks.append(chunk)

    async def release(self) -> None:
        """Pass the chunks held on, in order, and the next ones as they come."""
        self._open = True
        chunks, self._chunks = self._chunks, []
        for chunk in chunks:
            await self._sink(chunk)
