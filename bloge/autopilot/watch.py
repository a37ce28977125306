"""The error-rate loop's memory per knob: how long the rate has been past the threshold or
below the recovery threshold, and the bake of the last change it made. Pure: time comes in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Move = Literal["decrease", "increase", "rollback"]


@dataclass(slots=True)
class Bake:
    """A change under watch until ``until``: ``previous`` is restored if the rate goes above
    ``rate``, the rate when the change was made."""

    until: float
    previous: float
    rate: float


@dataclass(slots=True)
class Watch:
    """Hysteresis with a hold period (like Prometheus ``for:``): act only after the rate has
    stayed past ``threshold`` (or below ``recovery``) for ``hold`` seconds; in between,
    nothing happens and both timers restart."""

    breach_since: float | None = None
    calm_since: float | None = None
    bake: Bake | None = None

    def observe(self, rate: float, threshold: float, recovery: float, *, hold: float,
                now: float) -> Move | None:
        """What to do now, if anything."""
        bake = self.bake
        if bake is not None:
            if now >= bake.until:
                self.bake = None
            elif rate > bake.rate:
                self.bake = None
                self.breach_since = self.calm_since = None
                return "rollback"
        if rate > threshold:
            self.calm_since = None
            self.breach_since = now if self.breach_since is None else self.breach_since
            if now - self.breach_since >= hold:
                self.breach_since = now
                return "decrease"
        elif rate < recovery:
            self.breach_since = None
            self.calm_since = now if self.calm_since is None else self.calm_since
            if now - self.calm_since >= hold:
                self.calm_since = now
                return "increase"
        else:
            self.breach_since = self.calm_since = None
        return None
