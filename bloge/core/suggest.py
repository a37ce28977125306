""""Did you mean …?" suggestions for misspelled names."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, candidates: Iterable[str], *, limit: int = 3) -> list[str]:
    """The candidates closest to ``name``, best first; an exact case-insensitive match wins."""
    pool = list(dict.fromkeys(candidates))
    folded = [c for c in pool if c.lower() == name.lower() and c != name]
    close = difflib.get_close_matches(name, pool, n=limit, cutoff=0.6)
    return list(dict.fromkeys(folded + close))[:limit]
