"""A clock the tests move by hand, and bindings that remember what they were given."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class RecordingBinding:
    setting: str = "bloge.test.knob"
    integer: bool = False
    applied: list[float] = field(default_factory=list)

    def apply(self, value: float) -> None:
        self.applied.append(value)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
