"""The budget policy of ``bloge.budgets``: defaults for every agent, limits per API key, and
the price table (the shipped list prices, with the settings' over them); and what of it runs
on Temporal workers keep (see :mod:`bloge.temporal.limits`)."""

from __future__ import annotations

from typing import Any

from bloge_config import BlogeSettings
from bloge_container.errors import ConfigurationError


def budget_policy(settings: BlogeSettings) -> Any:
    """The :class:`~bloge.agent.BudgetPolicy` the settings describe (its prices those of
    the models as ``bloge.llm.model-aliases`` sends them)."""
    from bloge.agent import Budget, BudgetPolicy
    from bloge.llm.prices import ModelPrice, PriceTable

    section = settings.budgets
    keys = {name: _budget(Budget, limits) for name, limits in section.keys.items()}
    if (keys or _limited(section.per_key) or _limited(section.thread)) and not (
            settings.store.enabled):
        raise ConfigurationError("bloge.budgets limits per key or per thread are kept in the "
                                 "run store, and bloge.store.enabled is false")
    prices = PriceTable(overrides={
        model: ModelPrice(price.input, price.output, cache_read=price.cache_read,
                          cache_write=price.cache_write)
        for model, price in section.prices.items()}, aliases=settings.llm.model_aliases)
    return BudgetPolicy(run=_budget(Budget, section.run), thread=_budget(Budget, section.thread),
                        per_key=_budget(Budget, section.per_key), keys=keys,
                        period=section.period, prices=prices, answer_cap=section.answer_cap)


def _limited(limits: Any) -> bool:
    return any(value is not None for value in limits.model_dump().values())


def _budget(kind: Any, limits: Any) -> Any:
    return kind(**limits.model_dump()) if _limited(limits) else None


#: What runs on Temporal workers cannot keep, and why (the settings naming it follow).
_UNKEPT_ON_TEMPORAL = ("runs on Temporal workers keep their run's budget only: thread and "
                       "key budgets are kept by reservations in the run store, which a "
                       "workflow does not make")


def unkept_on_temporal(settings: BlogeSettings) -> list[str]:
    """The settings of ``bloge.budgets`` that runs on Temporal workers cannot keep: the
    thread's and the keys' limits."""
    section = settings.budgets
    named = [name for name, limits in (("bloge.budgets.thread", section.thread),
                                       ("bloge.budgets.per-key", section.per_key))
             if _limited(limits)]
    named.extend(f"bloge.budgets.keys.{key}" for key, limits in section.keys.items()
                 if _limited(limits))
    return named


def refuse_unkept_on_temporal(settings: BlogeSettings, what: str) -> None:
    """Refuse to start ``what`` (``bloge worker``…) with budgets its runs would not keep,
    rather than let runs spend past them unsaid."""
    named = unkept_on_temporal(settings)
    if named:
        raise ConfigurationError(f"{what}: {', '.join(named)}: {_UNKEPT_ON_TEMPORAL}; remove "
                                 f"{'it' if len(named) == 1 else 'them'}, or run with "
                                 "bloge.runner: local")


def temporal_policy(settings: BlogeSettings) -> Any:
    """The :class:`~bloge.agent.BudgetPolicy` a worker gives its runs (they keep its default
    run limits but ``time``, its prices — of the models as its aliases send them — and answer
    cap), or ``None`` when the settings set none of those (the runs are then budgeted as
    before there was a policy, with no marker in their histories)."""
    section = settings.budgets
    defaults = type(section)()
    if not (_limited(section.run) or section.prices or settings.llm.model_aliases
            or section.answer_cap != defaults.answer_cap):
        return None
    return budget_policy(settings)


def dropped_on_temporal(settings: BlogeSettings) -> str | None:
    """Why ``bloge.budgets.run.time`` is not kept by the runs of a worker, if it is set."""
    time = settings.budgets.run.time
    if time is None:
        return None
    return (f"bloge.budgets.run.time ({time:g}s) is not kept by runs on Temporal workers: a "
            "workflow must decide alike when replayed, never by the wall clock (its execution "
            "timeout limits its time); the other default run limits are kept")
