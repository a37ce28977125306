"""The user's cache folder for what parsing DSL text produces (lark's tables, parsed
documents): ``$XDG_CACHE_HOME/bloge`` or ``~/.cache/bloge``, a folder only this user may
write, for what is kept there is loaded with pickle. Without lark: a command whose documents
are all cached loads no parser."""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder() -> Path | None:
    """The folder, made if need be; ``None`` (no cache) when it cannot be made or is not this
    user's own, or when ``BLOGE_NO_CACHE`` is set."""
    if os.environ.get("BLOGE_NO_CACHE") or not hasattr(os, "getuid"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    folder = Path(base) / "bloge"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        status = folder.stat()
    except (OSError, RuntimeError):  # no home, a read-only one, a file in the way
        return None
    if status.st_uid != os.getuid() or status.st_mode & 0o022:
        return None  # another user could put a file there
    return folder
