"""``bloge.event-journal``: the structlog journal of agent callbacks."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from bloge_config.models.section import SECTION


class EventJournalSettings(BaseModel):
    """``bloge.event-journal``: the journal of agent callbacks, off unless enabled.
    ``bloge journal show`` reads the store or the file."""

    model_config = SECTION

    enabled: bool = Field(default=False, description="Record every agent callback in the "
                          "journal")
    sink: Literal["store", "file", "stdout"] | None = Field(
        default=None, description="Where the journal goes; null: the run store's events "
        "while bloge.store is enabled, else the file")
    path: Path = Field(default=Path("var/journal.jsonl"), description="The file sink's JSON "
                       "lines file, relative to the project")
    redact_keys: tuple[str, ...] = Field(
        default=(), description="Payload keys redacted in the journal and the run store's "
        "events, besides API keys, which always are")
