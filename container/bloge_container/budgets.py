"""The budget policy of ``bloge.budgets``: defaults for every agent, limits per API key, and
the price table (the shipped list prices, with the settings' over them)."""

from __future__ import annotations

from typing import Any

from bloge_config import BlogeSettings
from bloge_container.errors import ConfigurationError


def budget_policy(settings: BlogeSettings) -> Any:
    """The :class:`~bloge.agent.BudgetPolicy` the settings describe."""
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
        for model, price in section.prices.items()})
    return BudgetPolicy(run=_budget(Budget, section.run), thread=_budget(Budget, section.thread),
                        per_key=_budget(Budget, section.per_key), keys=keys,
                        period=section.period, prices=prices, answer_cap=section.answer_cap)


def _limited(limits: Any) -> bool:
    return any(value is not None for value in limits.model_dump().values())


def _budget(kind: Any, limits: Any) -> Any:
    return kind(**limits.model_dump()) if _limited(limits) else None
