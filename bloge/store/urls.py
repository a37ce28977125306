"""Store URLs: ``memory://``, ``sqlite:///path``, ``postgresql://…``, and their masked form."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from bloge.core.errors import BlogeUsageError

DEFAULT_URL = "sqlite:///var/bloge.db"
SCHEMES = ("memory", "sqlite", "postgresql", "postgres")
#: A URL with a password, read as people write it: the password runs from the first ``:``
#: after the user to the last ``@`` (a host has none), so a ``?``, ``#`` or ``/`` in it,
#: left unencoded, is still part of it and not the start of a query, fragment or path.
_WITH_PASSWORD = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<user>[^:/?#@]*):(?P<password>.*)@"
    r"(?P<rest>[^@]*)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class StoreUrl:
    """A parsed store URL. ``path`` is SQLite's file (``None`` in memory); ``conninfo``,
    ``search_path`` and ``password`` are PostgreSQL's."""

    scheme: str
    display: str
    path: Path | None = None
    conninfo: str | None = None
    search_path: str | None = None
    password: str | None = None
    synchronous_commit: bool = False


def parse_store_url(url: str, *, base_dir: str | os.PathLike[str] | None = None) -> StoreUrl:
    """Parse ``url``; a relative SQLite path is relative to ``base_dir`` (default: the working
    directory), as in ``sqlite:///var/bloge.db``; ``sqlite:////abs/path.db`` is absolute.
    A PostgreSQL URL may name the schema for bloge's tables (``?schema=bloge``) and make every
    commit wait for the server's disk (``?synchronous_commit=on``). A password may be
    percent-encoded or not."""
    parts = urlsplit(_password_encoded(url))
    scheme = parts.scheme.lower()
    display = masked(url)
    if scheme not in SCHEMES:
        raise BlogeUsageError(
            f"store URL {display!r}: unknown scheme {parts.scheme!r}; expected memory://, "
            "sqlite:///path/to/file.db or postgresql://user@host/database")
    if scheme == "memory":
        return StoreUrl("memory", display)
    if scheme == "sqlite":
        raw = unquote(url.split("://", 1)[1])
        if not raw.startswith("/") or raw in ("/", ""):
            raise BlogeUsageError(f"store URL {display!r}: write sqlite:///relative/file.db or "
                                  "sqlite:////absolute/file.db")
        name = raw[1:].split("?", 1)[0]
        if name == ":memory:":
            return StoreUrl("memory", display)
        path = Path(name)
        if not path.is_absolute():
            path = Path(base_dir if base_dir is not None else Path.cwd()) / path
        return StoreUrl("sqlite", display, path=path)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    schema = query.pop("schema", None)
    synchronous = query.pop("synchronous_commit", "off")
    if synchronous not in ("on", "off"):
        raise BlogeUsageError(f"store URL {display!r}: synchronous_commit must be on or off, "
                              f"got {synchronous!r}")
    conninfo = urlunsplit(("postgresql", parts.netloc, parts.path, urlencode(query), ""))
    return StoreUrl("postgresql", display, conninfo=conninfo, search_path=schema,
                    password=unquote(parts.password) if parts.password else None,
                    synchronous_commit=synchronous == "on")


def _password_encoded(url: str) -> str:
    """``url`` with its password percent-encoded (as it is already, or written as is)."""
    found = _WITH_PASSWORD.fullmatch(url)
    if found is None:
        return url
    password = quote(unquote(found["password"]), safe="")
    return f"{found['scheme']}{found['user']}:{password}@{found['rest']}"


def masked(url: str) -> str:
    """``url`` with its password (and any ``password=`` parameter) replaced by ``****``,
    whatever characters the password has."""
    found = _WITH_PASSWORD.fullmatch(url)
    if found is not None:
        url = f"{found['scheme']}{found['user']}:****@{found['rest']}"
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    secret_query = any(key.lower() in ("password", "passwd") for key, _ in pairs)
    if parts.password is None and not secret_query:
        return url
    netloc = parts.netloc
    if parts.password is not None:
        user_info, _, host = netloc.rpartition("@")
        user = user_info.split(":", 1)[0]
        netloc = f"{user}:****@{host}"
    query = "&".join(
        f"{key}=****" if key.lower() in ("password", "passwd") else f"{key}={value}"
        for key, value in pairs)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
