from __future__ import annotations

import pytest

OPENAI_KEY = "sk-proj-TESTKEY-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-api03-TESTKEY-0123456789abcdef"


class RecordedSleeps(list[float]):
    """An injected ``sleep`` that records the waits instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> RecordedSleeps:
    return RecordedSleeps()
