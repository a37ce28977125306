"""A run's ledger of spend: budgets enforced before the spend, settled after it.

Before each model call the :class:`RunLedger` reserves the call's worst case — the prompt's
tokens as the engine's token estimator counts them, the request's ``max_tokens`` (else the
policy's ``answer_cap``, which the request then carries) for the answer, their price — against
the run's budget and, through :class:`BudgetCounters`, the thread's and the API key's; after
it, the call settles at what the provider reported (a call without reported usage is charged
its reservation), priced as the model that answered. An agent's fallback models are each
priced as themselves: a call may fail over only to the fallbacks whose own worst case fits
(a model that fails spends nothing), the call's :class:`Reservation` holds the dearest of
them, and a call that fails over past the last of them stops the run on the budget that
refused the next (:meth:`RunLedger.release_model_call`). A ``summary(n)`` memory's
summaries are model calls of the run too (:class:`RunSummaries`). Before a tool round it
reserves the round's calls: the calls that fit run, in the model's order; the others are
not run and the model is told that the budget refused them; a round none of whose calls
fits stops the run before anything is dispatched.

A sub-agent's run (one started by a call of this run's tool round, see
:mod:`bloge.agent.subagent`) spends against its caller's budget too: each of its model calls
must fit what the caller's run (and the caller's caller…) has left, and what it spends counts
as the caller's, so that a caller whose children spent its budget stops at its next step —
its :class:`~bloge.agent.loop.errors.BudgetExceededError` names the sub-agent runs that spent
it, and how much each. A sub-agent's run that runs elsewhere (a Temporal child workflow) is
given what its callers allow it (:meth:`RunLedger.allowance`, a :class:`CallerAllowance`)
(:func:`spending_under`), and its caller charges what it reports it spent
(:meth:`RunLedger.charge`) when it ends.

Running out raises :class:`~bloge.agent.loop.errors.BudgetExceededError`, a run failure with
a checkpoint, that a raised limit resumes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from bloge.agent.budget import Budget, BudgetPolicy
from bloge.agent.loop.errors import BudgetExceededError
from bloge.agent.loop.tools import ToolOutcome
from bloge.llm.fallback import fails_over
from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.prices import ModelPrice
from bloge.llm.tokens import TokenEstimator
from bloge.llm.types import LlmRequest, LlmResponse

if TYPE_CHECKING:
    from bloge.agent.definition import AgentDef
    from bloge.agent.loop.checkpoint import AgentCheckpoint
    from bloge.agent.loop.engine import ToolRound
    from bloge.agent.loop.observer import RecordedResult, RunObserver
    from bloge.agent.loop.records import AgentUsage
    from bloge.agent.memory.summary import LlmSummarizer

_TOKEN_LIMITS = ("tokens", "input_tokens", "output_tokens", "usd")


@dataclass(frozen=True, slots=True)
class Spend:
    """Tokens, dollars and calls: what was spent, or what a step may spend."""

    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0
    model_calls: int = 0
    tool_calls: int = 0

    def measure(self, name: str) -> float:
        """The amount of budget limit ``name`` (``tokens`` is input and output together)."""
        if name == "tokens":
            return self.input_tokens + self.output_tokens
        value: float = getattr(self, name)
        return value

    def plus(self, other: Spend) -> Spend:
        return Spend(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens, self.usd + other.usd,
                     self.model_calls + other.model_calls, self.tool_calls + other.tool_calls)

    def minus(self, other: Spend) -> Spend:
        return Spend(self.input_tokens - other.input_tokens,
                     self.output_tokens - other.output_tokens, self.usd - other.usd,
                     self.model_calls - other.model_calls, self.tool_calls - other.tool_calls)


@dataclass(frozen=True, slots=True)
class Claim:
    """A budget shared beyond one run: ``scope`` ``"thread"`` (``key`` a thread id, no
    ``period``) or ``"key"`` (``key`` a principal, ``period`` e.g. ``2026-12-05``)."""

    scope: str
    key: str
    period: str
    budget: Budget


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a budget refused a step: limit ``measure`` of the ``scope``'s budget is ``limit``;
    ``used`` was spent (or reserved) already and the step needed ``needed``."""

    scope: str
    measure: str
    limit: float
    used: float
    needed: float


@dataclass(frozen=True, slots=True)
class Reservation:
    """What a model call reserved: ``spend``, the worst case of the dearest model it may
    ask, and the ``fallback`` models it may fail over to; ``refused``: the first fallback a
    budget does not let it ask, and why."""

    spend: Spend
    fallback: tuple[str, ...] = ()
    refused: tuple[str, Refusal] | None = None


@dataclass(frozen=True, slots=True)
class CallUsage:
    """One model call as the usage records keep it."""

    turn: int
    model: str
    spent: Spend
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reported: bool = True


def refusal(scope: str, budget: Budget, used: Spend, need: Spend) -> Refusal | None:
    """The first limit of ``budget`` that ``need`` on top of ``used`` would pass, if any."""
    for measure, limit in budget.limits().items():
        if measure == "time":
            continue
        needed = need.measure(measure)
        if needed and used.measure(measure) + needed > limit + 1e-12:
            return Refusal(scope, measure, limit, used.measure(measure), needed)
    return None


def calls_that_fit(budget: Budget, used: Spend, wanted: int) -> int:
    """How many of ``wanted`` tool calls fit ``budget`` after ``used``."""
    if budget.tool_calls is None:
        return wanted
    return max(0, min(wanted, budget.tool_calls - used.tool_calls))


class BudgetCounters(Protocol):
    """Budgets shared across runs and workers (a thread's, an API key's per period), kept
    where every worker sees them: a run store's atomic reservations."""

    async def reserve(self, claims: Sequence[Claim], need: Spend) -> Refusal | None:
        """Reserve ``need`` under every claim, or nothing and the first refusal."""
        ...

    async def reserve_tool_calls(self, claims: Sequence[Claim], wanted: int) -> int:
        """Reserve as many of ``wanted`` tool calls as every claim allows; how many."""
        ...

    async def settle(self, claims: Sequence[Claim], reserved: Spend, call: CallUsage) -> None:
        """Replace a model call's reservation by what it spent, and record the call."""
        ...

    async def release(self, claims: Sequence[Claim], reserved: Spend) -> None:
        """Give back the reservation of a model call that failed or was cancelled."""
        ...


#: What a model call reserves when no budget limits it.
_NOTHING = Spend()


#: Runs the calls of a tool round that the budgets let run.
Dispatch = Callable[[Sequence[ToolCall]], Awaitable[list[ToolOutcome]]]

class CallerAllowance:
    """What the runs above a run that runs elsewhere (a Temporal child workflow, its caller's
    ledger in another workflow) allow it: ``caps``, by measure, the limit of the caller that
    has the least left of it and what that caller had used when the run started. Each of
    its model calls must fit; ``spent_below`` is what it — and the runs it starts — spent,
    by run (``carried``: by a history of it before this one), which its caller charges when
    it ends (:meth:`RunLedger.charge`)."""

    __slots__ = ("caller", "caps", "descendants", "spent_below")

    def __init__(self, caps: Mapping[str, tuple[float, float]],
                 carried: Mapping[str, Spend] | None = None) -> None:
        self.caps = dict(caps)
        self.caller: RunLedger | CallerAllowance | None = None
        self.spent_below: dict[str, Spend] = dict(carried or {})
        self.descendants = _NOTHING
        for spent in self.spent_below.values():
            self.descendants = self.descendants.plus(spent)

    @property
    def limited(self) -> bool:
        return bool(self.caps)

    def limits(self) -> dict[str, tuple[float, float]]:
        """By measure: the limit, and what is used of it now."""
        return {measure: (limit, used + self.descendants.measure(measure))
                for measure, (limit, used) in self.caps.items()}

    def refusal_for_descendant(self, need: Spend) -> Refusal | None:
        for measure, (limit, used) in self.limits().items():
            needed = need.measure(measure)
            if needed and used + needed > limit + 1e-12:
                return Refusal("caller", measure, limit, used, needed)
        return None

    def allowance(self) -> CallerAllowance | None:
        """What a run this run starts elsewhere is allowed (see :meth:`RunLedger.allowance`)."""
        return _allowance(self)

    def charge(self, name: str, spent: Spend) -> None:
        """Count ``spent`` of run ``name`` as spent of the allowance."""
        _charge(self, name, spent)


#: The ledger of the run whose tool round runs in this task: a sub-agent's run that one of
#: its calls starts spends against it too.
_CALLER: ContextVar[RunLedger | CallerAllowance | None] = ContextVar("bloge_caller_ledger",
                                                                     default=None)
#: The limits a run that runs elsewhere is given of its callers' (not its tool calls, which
#: have their own ceiling, nor its time, which is its own).
_SHARED = ("tokens", "input_tokens", "output_tokens", "usd", "model_calls")


def caller_ledger() -> RunLedger | CallerAllowance | None:
    """The ledger of the run whose tool round runs in this task (a sub-agent's run one of its
    calls starts spends against it), if any."""
    return _CALLER.get()


@contextlib.contextmanager
def spending_under(allowance: CallerAllowance) -> Iterator[None]:
    """Runs started in this block are sub-agents' runs whose callers left them
    ``allowance``."""
    token = _CALLER.set(allowance)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # closed in another context (see _dispatch)
            _CALLER.reset(token)


def check_priced(definition: AgentDef, policy: BudgetPolicy, *, recorded: bool = False,
                 principal: str | None = None) -> None:
    """Refuse a ``usd`` limit when ``policy`` has no price for the agent's model or one of
    its fallbacks (:class:`~bloge.core.errors.BlogeUsageError`, naming the setting), as a run's
    :class:`RunLedger` refuses it when the run starts: ``definition``'s run budget over the
    policy's default and, for a ``recorded`` run (one whose store keeps its shared budgets),
    its thread's and ``principal``'s key budget. Asked before a run is taken up (a paused
    run's resume, a run on Temporal), so that a run refused so is left as it was."""
    budgets = [(definition.budget or Budget()).over(policy.run)]
    if recorded:
        budgets.extend(b for b in _shared_budgets(definition, policy, principal) if b is not None)
    if _usd_limited(budgets):
        for model in (definition.model, *definition.fallback):
            policy.prices.price(model)


def _shared_budgets(definition: AgentDef, policy: BudgetPolicy,
                    principal: str | None) -> tuple[Budget | None, Budget | None]:
    """The thread's and ``principal``'s key budget a recorded run of ``definition`` spends
    against, when limited."""
    thread = (definition.thread_budget or Budget()).over(policy.thread)
    return (thread if thread.limited else None), policy.key_budget(principal)


def _usd_limited(budgets: Sequence[Budget]) -> bool:
    return any(budget.usd is not None for budget in budgets)


class RunLedger:
    """What one run spent, and the budgets it spends against (see the module docs).
    ``caller`` is the ledger of the run whose tool call started this one (a sub-agent's);
    ``descendants`` what the runs it started spent."""

    __slots__ = ("_checkpoint", "_claims", "_counters", "_estimator", "_limited", "_prices",
                 "_started", "_unreserved", "_usage", "agent_id", "answer_cap", "budget",
                 "caller", "cost_usd", "descendants", "models", "prices", "run_id",
                 "spent_below", "tool_calls")

    def __init__(self, definition: AgentDef, policy: BudgetPolicy, *,
                 counters: BudgetCounters | None, thread_id: str | None,
                 principal: str | None, base: AgentUsage, estimator: TokenEstimator,
                 checkpoint: Callable[[], AgentCheckpoint],
                 usage: Callable[[], AgentUsage], run_id: str | None = None) -> None:
        self.agent_id = definition.id
        self.run_id = run_id
        #: The agent's model, then its fallbacks, in the order a call asks them.
        self.models = (definition.model, *definition.fallback)
        self.budget = (definition.budget or Budget()).over(policy.run)
        claims: list[Claim] = []
        if counters is not None:
            thread, key = _shared_budgets(definition, policy, principal)
            if thread is not None and thread_id is not None:
                claims.append(Claim("thread", thread_id, "", thread))
            if key is not None and principal is not None:
                claims.append(Claim("key", principal, _period(policy.period), key))
        self._claims = tuple(claims)
        self._counters = counters
        priced = _usd_limited([self.budget, *(c.budget for c in claims)])
        # A money limit needs every model's price now, not at the call that fails over.
        lookup = policy.prices.price if priced else policy.prices.get
        self.prices: tuple[ModelPrice | None, ...] = tuple(map(lookup, self.models))
        self._prices = policy.prices
        capped = any(getattr(b, name) is not None for b in (self.budget, *(c.budget for c in
                     claims)) for name in _TOKEN_LIMITS)
        self.answer_cap = policy.answer_cap if capped else None
        self.cost_usd = base.cost_usd
        self.tool_calls = base.tool_calls
        self._estimator = estimator
        self._checkpoint = checkpoint
        self._usage = usage
        self.caller: RunLedger | CallerAllowance | None = _CALLER.get()
        self.descendants = _NOTHING
        #: What each run below this one spent (``descendants``, run by run), by its name in
        #: a budget stop (:attr:`BudgetExceededError.sub_agents`).
        self.spent_below: dict[str, Spend] = {}
        # Nothing to judge: a model call reserves nothing (its prompt is not even counted).
        self._limited: bool = (self.budget.limited or bool(claims)
                               or (self.caller is not None and self.caller.limited))
        self._started = time.monotonic()
        self._unreserved = Reservation(_NOTHING, definition.fallback)

    def max_tokens(self, declared: int | None) -> int | None:
        """The ``max_tokens`` a request carries: the agent's, else the policy's cap when a
        token or money limit needs one."""
        return declared if declared is not None else self.answer_cap

    # -- model calls

    async def reserve_model_call(self, messages: Sequence[LlmMessage],
                                 max_tokens: int | None) -> Reservation:
        """Reserve the next call's worst case; raise when a budget refuses its model (its
        fallbacks past the first a budget refuses are left out of the reservation)."""
        if not self._limited:
            return self._unreserved
        self._check_time()
        prompt = sum(map(self._estimator.estimate, messages))
        answer = max_tokens or 0
        needs = [Spend(prompt, answer, 0.0 if price is None else price.cost(prompt, answer), 1, 0)
                 for price in self.prices]
        asked, refused = self._fitting(needs, self._used(self._usage()))
        need = max(needs[:asked], key=_usd, default=needs[0])
        while asked and self._counters is not None and self._claims:
            shared = await self._counters.reserve(self._claims, need)
            if shared is None:
                break
            # What others spent on the thread or key leaves no room for the dearer models.
            left = shared.limit - shared.used
            asked = (next((i for i, n in enumerate(needs[:asked]) if n.usd > left + 1e-12), 0)
                     if shared.measure == "usd" else 0)
            refused = dataclasses.replace(shared, needed=needs[asked].usd) if asked else shared
            need = max(needs[:asked], key=_usd, default=need)
        if not asked:
            assert refused is not None
            raise self._exceeded(refused, "model call")
        return Reservation(need, self.models[1:asked],
                           None if refused is None else (self.models[asked], refused))

    def _fitting(self, needs: Sequence[Spend], used: Spend) -> tuple[int, Refusal | None]:
        """How many of the models, in order, each fit the run's and its callers' budgets
        with its own ``needs``; the refusal of the first that does not."""
        for index, need in enumerate(needs):
            refused = refusal("run", self.budget, used, need)
            if refused is None and self.caller is not None:
                refused = self.caller.refusal_for_descendant(need)
            if refused is not None:
                return index, refused
        return len(needs), None

    async def settle_model_call(self, reserved: Reservation, turn: int,
                                response: LlmResponse) -> None:
        """Charge what the call spent (its reservation, when the provider reported nothing),
        at the price of the model that answered."""
        asked = self._answered(response)
        model = response.model or self.models[asked]
        cache_read = response.cache_read_tokens
        cache_write = response.cache_write_tokens
        if response.usage_reported:
            # The name the provider reported when it is priced (a dated one), else the
            # model asked, as it was sent.
            price = self._prices.get(response.model) if response.model else None
            if price is None:
                price = self.prices[asked]
            usd = 0.0 if price is None else price.cost(
                response.prompt_tokens, response.completion_tokens, cache_read=cache_read,
                cache_write=cache_write)
            spent = Spend(response.prompt_tokens, response.completion_tokens, usd, 1, 0)
        else:
            spent = reserved.spend
        self.cost_usd += spent.usd
        if self.caller is not None:
            self._charge_callers(spent)
        if self._counters is not None:
            await self._counters.settle(self._claims, reserved.spend, CallUsage(
                turn, model, spent, cache_read, cache_write, response.usage_reported))

    def _answered(self, response: LlmResponse) -> int:
        """Which of the models answered: the first the call did not skip or fail over from."""
        tried = response.fallback_from
        if not tried:
            return 0
        return next((i for i, model in enumerate(self.models) if model not in tried), 0)

    def _charge_callers(self, spent: Spend) -> None:
        """Count ``spent`` as the callers' too (a sub-agent's run spends theirs), by run."""
        name = self.agent_id if self.run_id is None else f"{self.agent_id} (run {self.run_id})"
        _charge(self.caller, name, spent)

    def charge(self, name: str, spent: Spend) -> None:
        """Count ``spent`` — what the run ``name`` this run started elsewhere spent (a
        Temporal child workflow's report, see :class:`CallerAllowance`) — as this run's and
        its callers'."""
        _charge(self, name, spent)

    def limits(self) -> dict[str, tuple[float, float]]:
        """By measure: the limit of this run's budget, and what is used of it now (by this
        run and the runs it started)."""
        used = self._used(self._usage())
        return {measure: (limit, used.measure(measure))
                for measure, limit in self.budget.limits().items()}

    def allowance(self) -> CallerAllowance | None:
        """What a run this run starts elsewhere is allowed: for each limit of this run's
        budget and its callers' (but tool calls and time), that of the one with the least
        left; ``None`` when none has such a limit."""
        return _allowance(self)

    @property
    def limited(self) -> bool:
        """Whether a step of this run (or of a run it started) has a budget to fit."""
        return self._limited

    def refusal_for_descendant(self, need: Spend) -> Refusal | None:
        """Whether a model call of a run this run started (a sub-agent's) fits this run's
        budget and its callers': the refusal of the first that it does not fit."""
        if self.budget.limited:
            refused = refusal("caller", self.budget, self._used(self._usage()), need)
            if refused is not None:
                return refused
        return None if self.caller is None else self.caller.refusal_for_descendant(need)

    async def release_model_call(self, reserved: Reservation, *,
                                 failed: BaseException | None = None) -> None:
        """Give back the reservation of a call that raised (a provider that refused it, a
        cancelled run): it spent nothing a budget counts. A call of the run's models that
        ``failed`` where its next model would have answered, had a budget let the call ask
        it, raises that budget's stop."""
        if self._counters is not None and self._claims and reserved.spend is not _NOTHING:
            await self._counters.release(self._claims, reserved.spend)
        if failed is not None and reserved.refused is not None and fails_over(failed):
            model, refused = reserved.refused
            raise self._exceeded(refused, f"fallback to model {model!r}") from failed

    # -- tool rounds

    async def tool_round(
        self, turn: int, calls: Sequence[ToolCall], recorded: Mapping[str, object] | None,
        dispatch: Dispatch,
        observer: RunObserver | None,
    ) -> list[ToolOutcome]:
        """Run the calls of the round that fit the budgets (see the module docs)."""
        fresh = [call for call in calls if recorded is None or call.id not in recorded]
        limited = self.budget.tool_calls is not None or any(
            c.budget.tool_calls is not None for c in self._claims)
        self._check_time()
        if not limited or not fresh:
            self.tool_calls += len(fresh)
            return await self._dispatch(dispatch, calls)
        usage = self._usage()
        fit = calls_that_fit(self.budget, self._used(usage), len(fresh))
        if fit and self._counters is not None and self._claims:
            fit = await self._counters.reserve_tool_calls(self._claims, fit)
        refused = None if fit == len(fresh) else self._tool_refusal(usage, len(fresh))
        allowed = {call.id for call in fresh[:fit]}
        refused_calls = [call for call in fresh if call.id not in allowed]
        outcomes: dict[str, ToolOutcome] = {}
        if refused is not None:
            text = _refused_text(refused, fit)
            for index, call in enumerate(refused_calls):
                outcome = ToolOutcome(call, success=False, content=text)
                outcomes[call.id] = outcome
                if observer is not None:
                    running = len(refused_calls) - index - 1 + fit
                    await observer.tool_completed(turn, outcome, running=running)
        if refused is not None and not fit:
            raise self._exceeded(refused, "tool round")
        self.tool_calls += fit
        ran = await self._dispatch(dispatch, [call for call in calls if call.id not in outcomes])
        outcomes.update((outcome.call.id, outcome) for outcome in ran)
        return [outcomes[call.id] for call in calls]

    async def _dispatch(self, dispatch: Dispatch, calls: Sequence[ToolCall]) -> list[ToolOutcome]:
        """``dispatch(calls)``, with this ledger the caller of the runs the calls start."""
        token = _CALLER.set(self)
        try:
            return await dispatch(calls)
        finally:
            # A run's coroutine closed by the garbage collector (a Temporal workflow its
            # worker dropped in a tool round) ends in another context: nothing to undo there.
            with contextlib.suppress(ValueError):
                _CALLER.reset(token)

    def _tool_refusal(self, usage: AgentUsage, wanted: int) -> Refusal:
        used = self._used(usage)
        if self.budget.tool_calls is not None and used.tool_calls + wanted > self.budget.tool_calls:
            return Refusal("run", "tool_calls", self.budget.tool_calls, used.tool_calls, wanted)
        claim = next(c for c in self._claims if c.budget.tool_calls is not None)
        assert claim.budget.tool_calls is not None
        return Refusal(claim.scope, "tool_calls", claim.budget.tool_calls,
                       claim.budget.tool_calls, wanted)

    # -- the run's own limits

    def _used(self, usage: AgentUsage) -> Spend:
        """This run's spend and its descendants' (their model calls; their tool calls have
        their own ceiling, see :mod:`bloge.agent.subagent`)."""
        children = self.descendants
        return Spend(usage.prompt_tokens + children.input_tokens,
                     usage.completion_tokens + children.output_tokens,
                     self.cost_usd + children.usd, usage.llm_calls + children.model_calls,
                     self.tool_calls)

    def _check_time(self) -> None:
        limit = self.budget.time
        if limit is None:
            return
        elapsed = time.monotonic() - self._started
        if elapsed >= limit:
            raise self._exceeded(Refusal("run", "time", limit, round(elapsed, 3), 0.0), "step")

    def _exceeded(self, refused: Refusal, step: str) -> BudgetExceededError:
        below = {}
        # Their tool calls count apart (a ceiling of their own), and their time is the run's.
        if refused.scope == "run" and refused.measure not in ("tool_calls", "time"):
            below = {name: spent.measure(refused.measure)
                     for name, spent in self.spent_below.items()
                     if spent.measure(refused.measure)}
        return BudgetExceededError(agent_id=self.agent_id, scope=refused.scope,
                                   limit_name=refused.measure, limit=refused.limit,
                                   used=refused.used, needed=refused.needed, step=step,
                                   checkpoint=self._checkpoint(), sub_agents=below)


#: ``await call(request, turn, summarized)``: the answer to ``request``, a summary of
#: ``summarized`` messages made before turn ``turn``, told to the run's listeners.
SummaryCall = Callable[[LlmRequest, int, int], Awaitable[LlmResponse]]


@runtime_checkable
class SummaryEffects(Protocol):
    """Effects (:class:`~bloge.agent.loop.engine.RunEffects`) that also make a ``summary(n)``
    memory's summaries where they make the run's model calls (a Temporal activity), and tell
    the run's listeners of each there."""

    async def call_summary(self, request: LlmRequest, turn: int,
                           summarized: int) -> LlmResponse:
        """See :data:`SummaryCall`."""
        ...


class RunSummaries:
    """The summaries of a run's memory by an :class:`~bloge.agent.memory.LlmSummarizer`:
    model calls of the run, each reserved against its budgets before it is made (its answer
    bounded as the run's own are: the agent's ``max_tokens``, else the answer cap a token or
    money limit needs), made by ``call`` (which tells the run's listeners of it), then
    settled at what it spent, priced like them."""

    __slots__ = ("_call", "_ledger", "_max_tokens", "_summarizer", "_turn")

    def __init__(self, summarizer: LlmSummarizer, ledger: RunLedger, max_tokens: int | None,
                 turn: Callable[[], int], call: SummaryCall) -> None:
        self._summarizer = summarizer
        self._ledger = ledger
        self._max_tokens = max_tokens
        self._turn = turn
        self._call = call

    async def summarize(self, messages: Sequence[LlmMessage]) -> LlmResponse:
        summarizer, ledger = self._summarizer, self._ledger
        if not summarizer.spends():
            return await summarizer.summarize(messages)
        request = summarizer.request(messages, max_tokens=ledger.max_tokens(self._max_tokens))
        reserved = await ledger.reserve_model_call(request.messages, request.max_tokens)
        turn = self._turn()
        try:
            response = await self._call(request, turn, len(messages))
        except BaseException:
            await ledger.release_model_call(reserved)
            raise
        await ledger.settle_model_call(reserved, turn, response)
        return response


def _usd(spend: Spend) -> float:
    return spend.usd


def _allowance(ledger: RunLedger | CallerAllowance | None) -> CallerAllowance | None:
    """See :meth:`RunLedger.allowance`."""
    caps: dict[str, tuple[float, float]] = {}
    while ledger is not None:
        for measure, (limit, used) in ledger.limits().items():
            if measure in _SHARED and (measure not in caps
                                       or limit - used < caps[measure][0] - caps[measure][1]):
                caps[measure] = (limit, used)
        ledger = ledger.caller
    return CallerAllowance(caps) if caps else None


def _charge(ledger: RunLedger | CallerAllowance | None, name: str, spent: Spend) -> None:
    """Count ``spent`` of run ``name`` as ``ledger``'s and its callers'."""
    while ledger is not None:
        ledger.descendants = ledger.descendants.plus(spent)
        ledger.spent_below[name] = ledger.spent_below.get(name, _NOTHING).plus(spent)
        ledger = ledger.caller


def _refused_text(refused: Refusal, ran: int) -> str:
    owner = {"run": "this run's", "thread": "the thread's", "key": "the API key's"}
    return (f"not run: {owner.get(refused.scope, refused.scope)} tool-call budget "
            f"({refused.limit:g} calls) allowed only {ran} of this round's calls; answer with "
            "the results you have")


def _period(period: str) -> str:
    """The current period's name, in UTC: ``2026-12-05T07``, ``2026-12-05`` or ``2026-12``."""
    formats = {"hour": "%Y-%m-%dT%H", "day": "%Y-%m-%d", "month": "%Y-%m"}
    return time.strftime(formats[period], time.gmtime())


class BudgetedRound:
    """A tool round that runs only the calls the run's budgets let run (see
    :meth:`RunLedger.tool_round`), through ``inner``."""

    __slots__ = ("_budget", "_inner", "_observer")

    def __init__(self, inner: ToolRound, budget: RunLedger, observer: RunObserver | None) -> None:
        self._inner = inner
        self._budget = budget
        self._observer = observer

    async def run(self, turn: int, calls: Sequence[ToolCall], *,
                  recorded: Mapping[str, RecordedResult] | None = None) -> list[ToolOutcome]:
        """The outcomes of ``calls``, in the model's order: a call the budgets refused is an
        error outcome saying so."""
        inner = self._inner
        return await self._budget.tool_round(
            turn, calls, recorded,
            lambda allowed: inner.run(turn, allowed, recorded=recorded), self._observer)
