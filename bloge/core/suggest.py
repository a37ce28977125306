""""Did you mean …?" suggestions for misspelled names.

Pure standard library, so that ``bloge_config`` may use it too: every "did you mean" of the
framework, the settings and the command line is worded by :func:`hint_for`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence


def did_you_mean(name: str, candidates: Iterable[str], *, limit: int = 3,
                 cutoff: float = 0.6) -> list[str]:
    """The candidates closest to ``name``, best first; an exact case-insensitive match wins.

    ``cutoff`` is :func:`difflib.get_close_matches`'s: how alike (0 to 1) a candidate must be.
    """
    pool = list(dict.fromkeys(candidates))
    folded = [c for c in pool if c.lower() == name.lower() and c != name]
    close = difflib.get_close_matches(name, pool, n=limit, cutoff=cutoff)
    return list(dict.fromkeys(folded + close))[:limit]


def hint_for(suggestions: Sequence[str], *, shown: str = "{!r}", otherwise: str = "") -> str:
    """``"; did you mean 'x'?"`` for the first of ``suggestions`` (best first), or
    ``otherwise`` when there is none.

    ``shown`` formats the suggestion: ``"{}()"`` for a function, the default quotes a name.
    """
    return f"; did you mean {shown.format(suggestions[0])}?" if suggestions else otherwise


def did_you_mean_hint(name: str, candidates: Iterable[str], *, shown: str = "{!r}",
                      otherwise: str = "", cutoff: float = 0.6) -> str:
    """:func:`hint_for` the candidate closest to ``name``: ``"; did you mean 'x'?"``, or
    ``otherwise``."""
    return hint_for(did_you_mean(name, candidates, limit=1, cutoff=cutoff), shown=shown,
                    otherwise=otherwise)
