"""Parsed DSL files kept between processes: a ``bloge`` command parses every DSL file it
reads, and lark with its tables loads for that (~40 ms of ``bloge run``); a file an earlier
command parsed, unchanged since, is read back from :func:`~bloge.dsl.cache.cache_folder`
instead (~0.1 ms).

One pickle per file under ``documents/``, named by a SHA-256 of the file's absolute path, so
the folder holds no more entries than the files ever parsed (a text that is not a file's is
never kept). Beside the statements, a SHA-256 of the text, of the parser's own sources
(:data:`_PARSER_SOURCES`: an edited grammar or another bloge parses again) and of Python's
version: an edited file is parsed again and its entry rewritten. Only texts that parsed are
kept; an entry that cannot be read back is parsed again and rewritten.
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


def cached_statements(text: str, filename: str) -> tuple[s.Statement, ...] | None:
    """The statements ``text``, the file ``filename`` holds, parsed to in an earlier process;
    ``None`` when none are kept for that text."""
    path = _entry(filename)
    if path is None:
        return None
    try:
        digest, statements = pickle.loads(path.read_bytes())  # noqa: S301 -- this user's own folder
    except FileNotFoundError:
        return None
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError,
            TypeError, ValueError, IndexError):  # damaged, or another bloge's: parse again
        return None
    if digest != _digest(text) or not isinstance(statements, tuple):
        return None
    return statements


def keep_statements(text: str, filename: str, statements: tuple[s.Statement, ...]) -> None:
    """Keep what ``text``, the file ``filename`` holds, parsed to, for later processes
    (nothing when there is no cache, or ``filename`` names no file)."""
    path = _entry(filename)
    if path is None:
        return
    aside = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}")
    entry = pickle.dumps((_digest(text), statements), protocol=pickle.HIGHEST_PROTOCOL)
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        aside.write_bytes(entry)
        aside.replace(path)  # renamed whole: a process reading it sees all of it or none
    except OSError:  # a full disk or a read-only cache: the next command parses again
        with contextlib.suppress(OSError):
            aside.unlink(missing_ok=True)


def _entry(filename: str) -> Path | None:
    file = Path(filename)
    if not file.is_file():  # "<string>", a text of the caller's: not kept
        return None
    folder = cache_folder()
    if folder is None:
        return None
    name = hashlib.sha256(str(file.resolve()).encode("utf-8", "surrogatepass"))
    return folder / "documents" / f"{name.hexdigest()}.pickle"


def _digest(text: str) -> bytes:
    digest = hashlib.sha256(_parser_digest())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.digest()


@functools.cache
def _parser_digest() -> bytes:
    here = Path(__file__).parent
    digest = hashlib.sha256(f"py{sys.version_info[0]}.{sys.version_info[1]}".encode())
    for name in _PARSER_SOURCES:
        digest.update((here / name).read_bytes())
    return digest.digest()
