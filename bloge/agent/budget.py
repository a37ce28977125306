"""``Budget``: the limits a run (or a thread, or an API key per period) may spend, and
``BudgetPolicy``: what a deployment adds to the agents' own budgets.

>>> Budget(tokens=50_000, usd=0.50, tool_calls=40, model_calls=10, time=30.0)

Every limit is optional (``None``: no limit). ``tokens`` counts prompt and answer tokens
together; ``input_tokens`` and ``output_tokens`` each alone; ``usd`` is priced with the
policy's :class:`~bloge.llm.prices.PriceTable`; ``time`` is wall-clock seconds of one run
(each resumed stretch counts from its own start). In the DSL: ``budget { tokens = 50000,
usd = 0.50, tool_calls = 40, model_calls = 10, time = 30s }`` (per run) and
``budget thread { … }`` (everything spent on the run's thread).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from bloge.core.errors import BlogeUsageError
from bloge.core.suggest import did_you_mean_hint
from bloge.llm.prices import DEFAULT_PRICE_TABLE, PriceTable

if TYPE_CHECKING:
    from bloge.agent.definition import AgentDef

#: The limits of a budget, in the order messages list them.
MEASURES = ("tokens", "input_tokens", "output_tokens", "usd", "model_calls", "tool_calls",
            "time")
#: The limits counted in whole numbers.
_COUNTS = frozenset({"tokens", "input_tokens", "output_tokens", "model_calls", "tool_calls"})
#: How long a key's budget period lasts.
Period = Literal["hour", "day", "month"]
#: The answer a model call is assumed to need when its request sets no ``max_tokens``.
DEFAULT_ANSWER_CAP = 4096


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits on what may be spent; see the module docs. Limits are at least 0 (``0``:
    nothing of that may be spent)."""

    tokens: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    usd: float | None = None
    model_calls: int | None = None
    tool_calls: int | None = None
    time: float | None = None

    def __post_init__(self) -> None:
        problems = [p for name in MEASURES if (p := limit_problem(name, getattr(self, name)))]
        if problems:
            raise BlogeUsageError("invalid budget: " + "; ".join(problems))
        if self.usd is not None:
            object.__setattr__(self, "usd", float(self.usd))
        time: object = self.time  # a timedelta too, from Python
        if isinstance(time, dt.timedelta):
            object.__setattr__(self, "time", time.total_seconds())
        elif self.time is not None:
            object.__setattr__(self, "time", float(self.time))

    @property
    def limited(self) -> bool:
        """Whether any limit is set."""
        return any(getattr(self, name) is not None for name in MEASURES)

    def limits(self) -> dict[str, float]:
        """The limits that are set, by measure."""
        return {name: value for name in MEASURES if (value := getattr(self, name)) is not None}

    def over(self, other: Budget | None) -> Budget:
        """This budget, with ``other``'s limit wherever this one sets none."""
        if other is None:
            return self
        return Budget(**{name: getattr(other, name) if getattr(self, name) is None
                         else getattr(self, name) for name in MEASURES})

    def replaced(self, **limits: Any) -> Budget:
        """This budget with ``limits`` changed (e.g. raised to resume a run)."""
        return dataclasses.replace(self, **limits)

    @classmethod
    def of(cls, value: Budget | Mapping[str, Any] | None) -> Budget | None:
        """``value`` as a budget: a ``Budget``, or a mapping of its limits
        (``{"usd": 0.5, "time": "30s"}``); ``None`` stays ``None``."""
        if value is None or isinstance(value, Budget):
            return value
        if not isinstance(value, Mapping):
            raise BlogeUsageError(f"a budget is a Budget or a mapping of limits, got {value!r}")
        unknown = sorted(set(value) - set(MEASURES))
        if unknown:
            raise BlogeUsageError(f"unknown budget limit {unknown[0]!r}; the limits are "
                                  + ", ".join(MEASURES))
        return cls(**{name: (_seconds(raw, name) if name == "time" else raw)
                      for name, raw in value.items()})

    def to_dict(self) -> dict[str, float]:
        return self.limits()


#: Why a budget beyond one run (a thread's, an API key's) has no ``time`` limit.
NO_SHARED_TIME = ("time limits the wall-clock time of one run: a thread's or an API key's "
                  "budget has none (set it in the run's budget)")


def limit_problem(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be the budget limit ``name``, or ``None``."""
    if value is None:
        return None
    if name == "time" and isinstance(value, dt.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "a whole number" if name in _COUNTS else (
            "a duration such as 30s" if name == "time" else "a number")
        return f"{name} must be {kind}, got {value!r}"
    if name in _COUNTS and not isinstance(value, int):
        return f"{name} must be a whole number, got {value!r}"
    if not math.isfinite(value) or value < 0:
        return f"{name} must be at least 0, got {value!r}"
    return None


_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def _seconds(raw: Any, name: str) -> Any:
    if isinstance(raw, dt.timedelta):
        return raw.total_seconds()
    if isinstance(raw, str):
        match = _DURATION.fullmatch(raw.strip())
        if match is None:
            raise BlogeUsageError(f"{name} must be a duration such as 30s or 5m, got {raw!r}")
        return float(match[1]) * _UNITS[match[2]]
    return raw


def parse_limits(texts: Sequence[str], *, option: str | None = None,
                 ) -> dict[str, dict[str, Any]]:
    """``["usd=1.00", "thread.tokens=80000"]`` (what ``bloge run --budget`` takes) as the
    limits of the run's budget (``"budget"``) and of its thread's (``"thread_budget"``, the
    ``thread.`` ones). A text that is not ``<limit>=<value>`` is refused
    (:class:`~bloge.core.errors.BlogeUsageError`) as a budget limit, or, given ``option``,
    as that command-line option's value (``--budget``)."""
    limits: dict[str, dict[str, Any]] = {}
    for text in texts:
        name, equals, raw = text.partition("=")
        name = name.strip().replace("-", "_")
        scope, _, measure = name.rpartition(".")
        if not equals or not raw.strip() or scope not in ("", "thread"):
            forms = "<limit>=<value> or thread.<limit>=<value> (e.g. usd=1.00)"
            raise BlogeUsageError(f"{option} takes {forms}, got {text!r}" if option else
                                  f"budget limit {text!r} is not {forms}")
        if measure not in MEASURES:
            hint = did_you_mean_hint(measure, MEASURES)
            raise BlogeUsageError(f"unknown budget limit {measure!r} in {text!r}{hint}; the "
                                  "limits are " + ", ".join(MEASURES))
        raw = raw.strip()
        try:
            value: Any = (_seconds(raw, measure) if measure == "time"
                          else int(raw) if measure in _COUNTS else float(raw))
        except ValueError:
            raise BlogeUsageError(f"budget limit {measure} must be a number, got {raw!r} "
                                  f"in {text!r}") from None
        if scope and measure == "time":
            raise BlogeUsageError(f"{option or 'budget limit'} {text!r}: {NO_SHARED_TIME}")
        limits.setdefault("thread_budget" if scope else "budget", {})[measure] = value
    for found in limits.values():
        Budget(**found)  # judged as any budget is
    return limits


def with_budget_limits(definition: AgentDef,
                       limits: Sequence[str] | Mapping[str, Any] | None, *,
                       option: str | None = None) -> AgentDef:
    """``definition`` with the budget limits ``limits`` raised (or set): texts such as
    ``"usd=1.00"`` (see :func:`parse_limits`, which ``option`` is passed to), or a mapping
    of the run's limits, ``thread`` a mapping of its thread's (``{"usd": 1.0, "thread":
    {"usd": 5.0}}``, an HTTP resume body's)."""
    if not limits:
        return definition
    if isinstance(limits, Mapping):
        run = {k: v for k, v in limits.items() if k != "thread"}
        thread = limits.get("thread") or {}
        if not isinstance(thread, Mapping):
            raise BlogeUsageError(f"a budget's thread limits are a mapping, got {thread!r}")
        if thread.get("time") is not None:
            raise BlogeUsageError(f"the budget's thread.time: {NO_SHARED_TIME}")
        parsed = {"budget": run, "thread_budget": dict(thread)}
    else:
        parsed = parse_limits(limits, option=option)
    changes: dict[str, Budget] = {}
    for name, found in parsed.items():
        if found:
            current = getattr(definition, name) or Budget()
            merged = Budget.of({**current.limits(), **found})
            assert merged is not None
            changes[name] = merged
    if not changes:
        return definition
    return dataclasses.replace(definition,
                               budget=changes.get("budget", definition.budget),
                               thread_budget=changes.get("thread_budget",
                                                         definition.thread_budget))


@dataclass(frozen=True, slots=True)
class BudgetPolicy:
    """What a deployment adds to its agents' budgets (``bloge.budgets``): default ``run``
    and ``thread`` limits (an agent's own limits win, one by one), limits per API key or
    principal and ``period`` (``keys``, by principal name, else ``per_key`` for every
    principal), the ``prices``, and the answer a model call is assumed to need when its
    request sets no ``max_tokens`` (``answer_cap``, sent as its ``max_tokens`` whenever a
    token or money limit applies, so that the assumption holds)."""

    run: Budget | None = None
    thread: Budget | None = None
    per_key: Budget | None = None
    keys: Mapping[str, Budget] = field(default_factory=dict)
    period: Period = "day"
    prices: PriceTable = DEFAULT_PRICE_TABLE
    answer_cap: int = DEFAULT_ANSWER_CAP

    def __post_init__(self) -> None:
        shared = [("thread", self.thread), ("per_key", self.per_key),
                  *((f"keys[{key!r}]", budget) for key, budget in self.keys.items())]
        timed = [name for name, budget in shared if budget is not None and budget.time is not None]
        if timed:
            raise BlogeUsageError(f"budget policy {', '.join(timed)}: {NO_SHARED_TIME}")

    def key_budget(self, principal: str | None) -> Budget | None:
        """The limits of ``principal`` for one period, if any."""
        if principal is None:
            return None
        found = self.keys.get(principal, self.per_key)
        return found if found is not None and found.limited else None


#: The policy of an engine given none: no limits beyond the agent's, the shipped prices.
DEFAULT_POLICY = BudgetPolicy()
