"""Parsed documents kept between processes: a ``bloge`` command parses every DSL file it
reads, and lark with its tables loads for that (~40 ms of ``bloge run``); a text parsed by an
earlier command is read back from :func:`~bloge.dsl.cache.cache_folder` instead (~0.1 ms).

One pickle per text under ``documents/``, named by a SHA-256 of the text, of the parser's own
sources (:data:`_PARSER_SOURCES`: an edited grammar or another bloge parses again) and of
Python's version. Only texts that parsed are kept; a file that cannot be read back is parsed
again and rewritten.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import sys
import threading
from pathlib import Path

from bloge.dsl import syntax as s
from bloge.dsl.cache import cache_folder

#: What decides the statements a text parses to: the grammar and the modules building them.
_PARSER_SOURCES = ("bloge.lark", "lalr.py", "limits.py", "source.py", "syntax.py")


def cached_statements(text: str) -> tuple[s.Statement, ...] | None:
    """The statements ``text`` parsed to in an earlier process; ``None`` when none are kept."""
    path = _path(text)
    if path is None:
        return None
    try:
        statements = pickle.loads(path.read_bytes())  # noqa: S301 -- this user's own folder
    except FileNotFoundError:
        return None
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError,
            TypeError, ValueError, IndexError):  # damaged, or another bloge's: parse again
        return None
    return statements if isinstance(statements, tuple) else None


def keep_statements(text: str, statements: tuple[s.Statement, ...]) -> None:
    """Keep what ``text`` parsed to for later processes (nothing when there is no cache)."""
    path = _path(text)
    if path is None:
        return
    aside = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}")
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        aside.write_bytes(pickle.dumps(statements, protocol=pickle.HIGHEST_PROTOCOL))
        aside.replace(path)  # renamed whole: a process reading it sees all of it or none
    except OSError:  # a full disk or a read-only cache: the next command parses again
        with contextlib.suppress(OSError):
            aside.unlink(missing_ok=True)


def _path(text: str) -> Path | None:
    folder = cache_folder()
    if folder is None:
        return None
    digest = hashlib.sha256(_parser_digest())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return folder / "documents" / f"{digest.hexdigest()}.pickle"


@functools.cache
def _parser_digest() -> bytes:
    here = Path(__file__).parent
    digest = hashlib.sha256(f"py{sys.version_info[0]}.{sys.version_info[1]}".encode())
    for name in _PARSER_SOURCES:
        digest.update((here / name).read_bytes())
    return digest.digest()
