"""``bloge.store``: the run store, where runs and threads are kept."""

from __future__ import annotations

from pydantic import Field

from bloge_config.fields import Duration, StoreUrl
from bloge_config.models.section import SECTION, MaskedSection, PositiveDuration


class StoreSettings(MaskedSection):
    """``bloge.store``: where runs and threads are kept (see :mod:`bloge.store`). On by
    default, in a SQLite file under the project; ``postgresql://…`` for several workers."""

    model_config = SECTION

    enabled: bool = Field(default=True, description="Record every run, its thread and "
                          "checkpoints in the store; false: runs are not recorded")
    url: StoreUrl = Field(default="sqlite:///var/bloge.db", description="memory://, "
                          "sqlite:///path (relative to the project) or postgresql://…")
    lease: PositiveDuration = Field(
        default=30.0, description="Seconds a run holds its thread without its worker "
        "renewing the lease (a dead worker's thread is freed then)")
    auto_migrate: bool = Field(default=True, description="Upgrade a store written by an "
                               "older bloge on first use; false: it is refused until "
                               "bloge store migrate")
    busy_timeout: Duration = Field(default=5.0, description="Seconds a SQLite write waits "
                                   "for another process's write to finish")
