"""``Knob``: a number the autopilot may change, its tier, bounds and guardrails."""

from __future__ import annotations

import math
import re
from dataclasses import KW_ONLY, dataclass
from enum import Enum
from typing import Literal, Protocol

from bloge.core.errors import BlogeUsageError

Mode = Literal["enforce", "dry-run"]
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]{0,127}")


class KnobTier(Enum):
    """``WHITELIST`` knobs are changed at once (when the autopilot auto-executes them);
    ``DANGEROUS`` ones are only ever proposed, for a human to approve."""

    WHITELIST = "whitelist"
    DANGEROUS = "dangerous"


class Binding(Protocol):
    """Where a knob's value takes effect: a setting the running system reads at the start of
    each run or turn (see :mod:`bloge.autopilot.bindings`)."""

    @property
    def setting(self) -> str:
        """The setting's key, as ``bloge config`` shows it."""
        ...

    @property
    def integer(self) -> bool:
        """Whether the setting takes whole numbers only."""
        ...

    def apply(self, value: float) -> None:
        """Make ``value`` the setting's value from the next run or turn on."""
        ...


@dataclass(frozen=True, slots=True)
class Knob:
    """A tunable number in ``[min, max]``, now ``value``.

    ``max_step`` bounds one change (a larger one is clamped to it), ``cooldown`` is the
    seconds that must pass after a change before the next, ``mode`` ``"dry-run"`` records what
    would have been done and changes nothing, ``bake`` is the seconds after an applied change
    during which a worse error rate rolls it back (see
    :meth:`~bloge.autopilot.Autopilot.observe_error_rate`). ``binding`` makes the value live.
    """

    name: str
    tier: KnobTier
    min: float
    max: float
    value: float
    _: KW_ONLY
    max_step: float | None = None
    cooldown: float | None = None
    binding: Binding | None = None
    mode: Mode = "enforce"
    bake: float | None = None
    description: str = ""

    def __post_init__(self) -> None:
        where = f"knob {self.name!r}"
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise BlogeUsageError(f"a knob name must be letters, digits, '_', '.' or '-', "
                                  f"starting with a letter; got {self.name!r}")
        if not isinstance(self.tier, KnobTier):
            raise BlogeUsageError(f"{where}: tier must be a KnobTier, got {self.tier!r}")
        for field in ("min", "max", "value"):
            if not is_number(getattr(self, field)):
                raise BlogeUsageError(f"{where}: {field} must be a finite number, got "
                                      f"{getattr(self, field)!r}")
        for field in ("min", "max", "value"):  # one type, whatever the caller wrote
            object.__setattr__(self, field, float(getattr(self, field)))
        if self.min > self.max:
            raise BlogeUsageError(f"{where}: min {self.min:g} is more than max {self.max:g}")
        if not self.min <= self.value <= self.max:
            raise BlogeUsageError(f"{where}: value {self.value:g} is outside "
                                  f"[{self.min:g}, {self.max:g}]")
        for field in ("max_step", "cooldown", "bake"):
            limit = getattr(self, field)
            if limit is not None and not (is_number(limit) and limit > 0):
                raise BlogeUsageError(f"{where}: {field} must be a number > 0 or None, got "
                                      f"{limit!r}")
        if self.mode not in ("enforce", "dry-run"):
            raise BlogeUsageError(f"{where}: mode must be 'enforce' or 'dry-run', got "
                                  f"{self.mode!r}")
        if self.integer and not all(float(v).is_integer()
                                    for v in (self.min, self.max, self.value)):
            raise BlogeUsageError(f"{where}: its setting {self.setting} takes whole numbers; "
                                  "min, max and value must be whole")

    @property
    def integer(self) -> bool:
        return self.binding is not None and self.binding.integer

    @property
    def setting(self) -> str | None:
        return None if self.binding is None else self.binding.setting

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "tier": self.tier.value, "min": self.min, "max": self.max,
                "value": self.value, "max_step": self.max_step, "cooldown": self.cooldown,
                "mode": self.mode, "bake": self.bake, "setting": self.setting,
                "description": self.description}


def is_number(value: object) -> bool:
    """A finite int or float (not a bool)."""
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))
