"""The limits asked for a run on Temporal that its workflow never keeps (no server needed)."""

from __future__ import annotations

from typing import Any

import pytest

from bloge.core.errors import BlogeUsageError
from bloge.temporal import LimitsRefusedError
from bloge.temporal.limits import refuse_unkept


@pytest.mark.parametrize(("budget", "named"), [
    ({"tokens": 800, "time": 30}, "budget.time: a run on Temporal workers"),
    ({"time": 0}, "budget.time: "),
    ({"thread": {"tokens": 800}, "time": 30}, "budget.thread: runs on Temporal workers"),
])
def test_a_thread_or_time_limit_is_refused_naming_its_field(budget: dict[str, Any],
                                                           named: str) -> None:
    with pytest.raises(LimitsRefusedError) as refused:
        refuse_unkept(budget)
    assert isinstance(refused.value, BlogeUsageError)
    assert str(refused.value).startswith(named)
    assert str(refused.value) == f"{named.partition(':')[0]}: {refused.value.why}"


@pytest.mark.parametrize("budget", [None, {}, {"tokens": 800, "usd": 1.0}, {"thread": {}},
                                    {"time": None}])
def test_the_limits_a_workflow_keeps_pass(budget: dict[str, Any] | None) -> None:
    refuse_unkept(budget)
