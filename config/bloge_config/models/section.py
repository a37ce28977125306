"""What every settings section shares: kebab-case aliases, frozen models, and the value types
that several sections use (sizes in bytes, HTTP statuses, positive durations)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from pydantic import BaseModel, ByteSize, ConfigDict, Field

from bloge.core.masking import mask_url_credentials
from bloge_config.fields import Duration


def kebab(name: str) -> str:
    """The kebab-case alias of a field name: ``max_attempts`` → ``max-attempts``."""
    return name.replace("_", "-")


SECTION = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, alias_generator=kebab)
"""The configuration of every section model: frozen, no unknown keys, kebab-case aliases."""

HttpStatus = Annotated[int, Field(ge=100, le=599)]
ResponseBytes = Annotated[ByteSize, Field(gt=0)]
"""A size in bytes: a number, or text such as ``32MiB`` or ``500kB``."""
PositiveDuration = Annotated[Duration, Field(gt=0)]
"""A duration longer than zero seconds."""
MAX_RESPONSE_BYTES = 32 * 1024 * 1024


class MaskedSection(BaseModel):
    """A settings section whose repr masks the credentials of URLs (``base_url``)."""

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, mask_url_credentials(value) if isinstance(value, str) else value
