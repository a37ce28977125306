"""What installed packages advertise through entry points, read once per process.

Looking up one group (``importlib.metadata.entry_points(group=…)``) reads and parses the
metadata of every installed distribution, whatever the group. bloge looks up two at start-up
(the DSL extensions, the operators): it reads them all once and picks each group from that.
:func:`refresh` forgets that read, for a process that installs packages after it asked (a
test suite that builds and installs a wheel, say): the next lookup reads them afresh.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.metadata import EntryPoints


def entry_points(*, group: str) -> EntryPoints:
    """The installed entry points of ``group``, as installed when the process first asked."""
    return _installed().select(group=group)


def refresh() -> None:
    """Forget the installed entry points read so far: the next :func:`entry_points` reads
    the installed packages' metadata again (see the module docs). What was discovered
    through them before (the DSL extensions, say) is not discovered again by this."""
    _installed.cache_clear()


@functools.cache
def _installed() -> EntryPoints:
    # importlib.metadata costs ~20 ms to import; only discovery needs it, `import bloge` not.
    from importlib.metadata import entry_points as installed  # noqa: PLC0415 -- see above

    # Every group: Python 3.11 returns them as its SelectableGroups, whose select(group=…)
    # picks one as EntryPoints.select does; 3.12 returns EntryPoints.
    return installed()  # type: ignore[return-value]  # see above
