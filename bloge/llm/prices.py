"""What model calls cost: a :class:`ModelPrice` per model, looked up in a :class:`PriceTable`.

Prices are US dollars per million tokens. :data:`DEFAULT_PRICES` ships the list prices of
common models as their providers published them (see :data:`PRICES_AS_OF` and the sources
below); a deployment overrides or adds models with ``bloge.budgets.prices``. Providers change
prices: check these against your invoice before you rely on a money budget.

Sources, as checked on :data:`PRICES_AS_OF`:

- OpenAI: https://openai.com/api/pricing (standard tier; "cached input" is ``cache_read``;
  OpenAI charges nothing extra to write its cache). The input and output rates agree with
  several pages that quote it (March to June 2026); the cached-input rates were not confirmed
  independently.
- Anthropic: https://docs.anthropic.com/en/docs/about-claude/pricing ("5m cache writes" is
  ``cache_write``, "cache hits & refreshes" is ``cache_read``), checked against a copy of
  that page.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bloge.core.errors import BlogeUsageError

#: When the shipped prices were last checked against their sources.
PRICES_AS_OF = "2026-12-05"


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """US dollars per million tokens: ``input`` (uncached prompt tokens), ``output``, and
    prompt tokens read from (``cache_read``) or written to (``cache_write``) a provider's
    prompt cache; ``None`` for either cache rate: the ``input`` rate."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "cache_read", "cache_write"):
            value = getattr(self, name)
            if value is None and name.startswith("cache"):
                continue
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not math.isfinite(value) or value < 0):
                raise BlogeUsageError(f"a model price's {name} must be a number of dollars per "
                                      f"million tokens, at least 0, got {value!r}")

    def cost(self, prompt_tokens: int, completion_tokens: int, *, cache_read: int = 0,
             cache_write: int = 0) -> float:
        """The dollars of one call. ``prompt_tokens`` counts every prompt token, those read
        from or written to the cache included (as OpenAI reports them)."""
        plain = max(0, prompt_tokens - cache_read - cache_write)
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        return (plain * self.input + completion_tokens * self.output
                + cache_read * read + cache_write * write) / 1_000_000


def _openai(input: float, cached: float, output: float) -> ModelPrice:
    return ModelPrice(input, output, cache_read=cached, cache_write=input)


def _anthropic(input: float, output: float) -> ModelPrice:
    # Anthropic's cache rates are fixed multiples of the input rate: 10% to read, 125% to write
    # for the 5-minute cache.
    return ModelPrice(input, output, cache_read=round(input * 0.1, 6),
                      cache_write=round(input * 1.25, 6))


#: List prices of common models (see the module docs for the sources and their date).
DEFAULT_PRICES: Mapping[str, ModelPrice] = {
    "gpt-4o": _openai(2.50, 1.25, 10.00),
    "gpt-4o-mini": _openai(0.15, 0.075, 0.60),
    "gpt-4.1": _openai(2.00, 0.50, 8.00),
    "gpt-4.1-mini": _openai(0.40, 0.10, 1.60),
    "gpt-4.1-nano": _openai(0.10, 0.025, 0.40),
    "gpt-5": _openai(1.25, 0.125, 10.00),
    "gpt-5-mini": _openai(0.25, 0.025, 2.00),
    "gpt-5-nano": _openai(0.05, 0.005, 0.40),
    "o3": _openai(2.00, 0.50, 8.00),
    "o3-mini": _openai(1.10, 0.55, 4.40),
    "o4-mini": _openai(1.10, 0.275, 4.40),
    "claude-opus-4-1": _anthropic(15.00, 75.00),
    "claude-opus-4": _anthropic(15.00, 75.00),
    "claude-sonnet-4-5": _anthropic(3.00, 15.00),
    "claude-sonnet-4": _anthropic(3.00, 15.00),
    "claude-3-7-sonnet": _anthropic(3.00, 15.00),
    "claude-3-5-sonnet": _anthropic(3.00, 15.00),
    "claude-haiku-4-5": _anthropic(1.00, 5.00),
    "claude-3-5-haiku": _anthropic(0.80, 4.00),
    "claude-3-haiku": ModelPrice(0.25, 1.25, cache_read=0.03, cache_write=0.30),
}


class PriceTable:
    """Prices by model id. A model is found by its id, else by the longest id in the table
    it starts with followed by ``-`` (``gpt-4o-2024-08-06`` is priced as ``gpt-4o``), after
    dropping a ``provider/`` or ``provider:`` prefix.

    A call is priced as the model sent on the wire: with ``aliases`` (those of a
    :class:`~bloge.llm.aliases.ModelAliases` provider, ``{"gpt-4o": "local-llama"}``) a
    model is priced as the one it is sent as."""

    __slots__ = ("_aliases", "_found", "_prices")

    def __init__(self, prices: Mapping[str, ModelPrice] | None = None, *,
                 overrides: Mapping[str, ModelPrice] | None = None,
                 aliases: Mapping[str, str] | None = None) -> None:
        self._prices = {**(DEFAULT_PRICES if prices is None else prices), **(overrides or {})}
        self._aliases = dict(aliases or {})
        #: What :meth:`get` found for each model asked: every run looks its model up.
        self._found: dict[str, ModelPrice | None] = {}

    def __repr__(self) -> str:
        return f"PriceTable({len(self._prices)} models)"

    def __contains__(self, model: object) -> bool:
        return isinstance(model, str) and self.get(model) is not None

    def models(self) -> Iterable[str]:
        return iter(sorted(self._prices))

    def get(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or ``None`` when the table has none."""
        try:
            return self._found[model]
        except KeyError:
            found = self._found[model] = self._lookup(self._aliases.get(model, model))
            return found

    def _lookup(self, model: str) -> ModelPrice | None:
        found = self._prices.get(model)
        if found is not None:
            return found
        for separator in ("/", ":"):
            if separator in model:
                model = model.rsplit(separator, 1)[1]
        found = self._prices.get(model)
        if found is not None:
            return found
        candidates = [known for known in self._prices if model.startswith(known + "-")]
        return self._prices[max(candidates, key=len)] if candidates else None

    def price(self, model: str) -> ModelPrice:
        """The price of ``model``; :class:`BlogeUsageError` naming the setting when unknown."""
        found = self.get(model)
        if found is None:
            sent = self._aliases.get(model, model)
            named = (repr(model) if sent == model
                     else f"{sent!r} (model {model!r} is sent as it, bloge.llm.model-aliases)")
            raise BlogeUsageError(
                f"no price for model {named}, so a usd budget cannot be kept; add it to "
                "bloge.budgets.prices (its input and output prices, in dollars per million "
                "tokens)")
        return found


#: The shipped prices, for runs given no table of their own.
DEFAULT_PRICE_TABLE = PriceTable()
