"""What counts as a secret, and masking credentials out of text before anyone sees it.

A **name** (of a key, a JSON member, a header, a query parameter, a ``name=value`` pair) is
compared case-insensitively with ``-`` and ``_`` ignored, so ``X-Api-Key``, ``x_api_key``
and ``xApiKey`` are one name. It is *sensitive* when it is one of :data:`SENSITIVE_NAMES`,
ends in ``auth`` (``basic_auth``, ``oauth``), or contains one of :data:`SENSITIVE_FRAGMENTS`
(``session_token``, ``db.password``, ``Set-Cookie``).

Token counts are not secrets: a name whose only sensitive part is the plural ``tokens``
(``prompt_tokens``, ``max_tokens``, ``prompt_tokens_details``) is a *count name*. A value
under a count name is kept when it holds no text (numbers, booleans, null, and containers of
them), and masked otherwise (``access_tokens: ["…"]``). We exempt by this rule rather than
by a list of usage keys, because every provider names its counters differently.

:func:`mask_url_credentials` masks the credentials of URLs: their user-info
(``https://user:KEY@host``) and query parameters (``?api-key=KEY``, ``?key=KEY``,
``?token=KEY``); use it on values that are URLs, or that hold user data to be shown.
:class:`CredentialMasker` masks those and every credential in free text: ``name=value`` and
``name: value`` pairs with a sensitive name (``password=hunter2``, ``"token": "abc"``,
``Authorization: Bearer xyz``, a whole ``{…}`` under ``"credentials"``) and bare ``Bearer``
credentials. :func:`mask_credentials` is one with the default mask, for error messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

MASK = "****"

#: Names sensitive as a whole (normalized: lower case, without ``-`` and ``_``).
SENSITIVE_NAMES: frozenset[str] = frozenset({"auth", "passphrase", "sessionid"})

#: Names containing one of these (normalized) are sensitive; ``token`` except as ``tokens``.
SENSITIVE_FRAGMENTS: tuple[str, ...] = (
    "token", "secret", "password", "passwd", "apikey", "authorization", "cookie",
    "credential", "privatekey",
)

_FRAGMENT = re.compile("|".join("token(?!s)" if f == "token" else f for f in SENSITIVE_FRAGMENTS))
#: Query parameters that carry credentials although their names are not sensitive elsewhere.
_QUERY_CREDENTIALS = frozenset({"key", "sig", "signature"})


#: What a name says of its values: nothing, secret, or a count (see the module docs).
NameKind = Literal["safe", "sensitive", "count"]
SAFE: NameKind = "safe"
SENSITIVE: NameKind = "sensitive"
COUNT: NameKind = "count"
#: The types of values that hold no text.
NON_TEXT = frozenset({int, float, bool, type(None)})


def normalize_key(name: str) -> str:
    """The form names are compared in: lower case, without ``-`` and ``_``."""
    return name.lower().replace("-", "").replace("_", "")


def name_kind(name: str, extra: frozenset[str] = frozenset()) -> NameKind:
    """Whether values under ``name`` are secret, counts, or neither; ``extra`` holds more
    sensitive names, normalized, matched whole."""
    normal = normalize_key(name)
    if normal in SENSITIVE_NAMES or normal in extra or normal.endswith("auth"):
        return SENSITIVE
    if _FRAGMENT.search(normal):
        return SENSITIVE
    return COUNT if "tokens" in normal else SAFE


def holds_no_text(value: object) -> bool:
    """Whether ``value`` is made of numbers, booleans and nulls only (what a count name may
    hold without being masked)."""
    if type(value) in NON_TEXT:
        return True
    if isinstance(value, dict):
        return all(map(holds_no_text, value.values()))
    if isinstance(value, list | tuple):
        return all(map(holds_no_text, value))
    return False


# scheme://user-info@ : the user-info stops at the authority's end; the last "@" ends it.
# The user-info of a URL: ``user:password`` before its ``@``; a password may hold an
# unencoded ``/``, ``?`` or ``#`` (people write them so), which would otherwise end it.
_URL_USER_INFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/?#\"'<>\\]+|"
                            r"[^\s:/?#@\"'<>\\]*:[^\s@\"'<>\\]*)@")
_PAIR = re.compile(
    r"""(?P<name>(?<![\w.\-])[A-Za-z_][\w.\-]*)(?:\\?["'])?\s*[:=]\s*(?P<value>
        \\"(?:(?!\\")[^\n])*(?:\\")?                         # JSON quoted inside a JSON string
      | "(?:[^"\\]|\\.)*"?                                   # a double-quoted value
      | '(?:[^'\\]|\\.)*'?                                   # a single-quoted value
      | [{\[]                                                # a container: see _container_end
      | (?:bearer|basic|digest|token)[ \t]+[^\s"',;&]+       # an authorization header value
      | [^\s"',;&\#)}\]]+                                     # a bare value
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_QUERY_PARAMETER = re.compile(r"(?P<lead>[?&;])(?P<name>[\w.\-~%]+)=(?P<value>[^&#\s\"'<>]*)")
_BEARER = re.compile(r"(?i)\bbearer[ \t]+[\w\-.~+/]+=*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


class CredentialMasker:
    """Masks credentials in text (see the module docs); ``keys`` are more sensitive names,
    ``mask`` what replaces each credential. Text holding none is returned as is."""

    __slots__ = ("_extra", "_mask")

    def __init__(self, keys: Iterable[str] = (), *, mask: str = MASK) -> None:
        self._extra = frozenset(normalize_key(k) for k in keys)
        self._mask = mask

    def __call__(self, text: str) -> str:
        text = mask_url_credentials(text, mask=self._mask)
        text = self._mask_pairs(text)
        return _BEARER.sub(f"Bearer {self._mask}", text)

    def _mask_pairs(self, text: str) -> str:
        pieces: list[str] = []
        copied = searched = 0  # text[:copied] is in pieces; pairs are looked for from searched
        while match := _PAIR.search(text, searched):
            value = match.start("value")
            masked = self._masked_value(match)
            if masked is None:
                searched = value  # the value may hold a pair itself
                continue
            end = _container_end(text, value) if match["value"] in ("{", "[") else match.end()
            pieces += [text[copied:value], masked]
            copied = searched = end
        if not pieces:
            return text
        pieces.append(text[copied:])
        return "".join(pieces)

    def _masked_value(self, match: re.Match[str]) -> str | None:
        """What replaces the pair's value, or ``None`` when it is not a credential."""
        name, value = match["name"], match["value"]
        if not _is_credential(name, value, self._extra):
            return None
        if value[:1] in ('"', "'", "\\"):
            quote = value[:2] if value[0] == "\\" else value[0]  # \" inside a JSON string
            closed = len(value) > len(quote) and value.endswith(quote)
            return f"{quote}{self._mask}{quote if closed else ''}"
        return self._mask


def _container_end(text: str, start: int) -> int:
    """Where the ``{…}`` or ``[…]`` opening at ``start`` ends (after its closing bracket), or
    the end of ``text`` when it is cut short; brackets inside quoted strings do not count."""
    depth = 0
    quote = ""
    index = start
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return len(text)


def _is_credential(name: str, value: str, extra: frozenset[str]) -> bool:
    kind = name_kind(name, extra)
    if kind == COUNT:
        return not _NUMBER.fullmatch(value)
    return kind == SENSITIVE


def mask_url_credentials(text: str, *, mask: str = MASK) -> str:
    """``text`` with the credentials of every URL in it masked: the password of the
    user-info (``https://user:KEY@host`` → ``https://user:****@host``), a user-info that is
    a token (``https://KEY@host`` → ``https://****@host``), and query parameters with a
    sensitive name or named ``key``, ``sig`` or ``signature`` (``?api-key=****``)."""
    masked = text
    if "@" in masked:
        masked = _URL_USER_INFO.sub(lambda m: _masked_user_info(m, mask), masked)
    if "=" in masked:
        masked = _QUERY_PARAMETER.sub(lambda m: _masked_parameter(m, mask), masked)
    return text if masked == text else masked  # the text itself when nothing was masked


def _masked_parameter(match: re.Match[str], mask: str) -> str:
    name, value = match["name"], match["value"]
    if name.lower() in _QUERY_CREDENTIALS or _is_credential(name, value, frozenset()):
        return f"{match['lead']}{name}={mask}"
    return match[0]


def _masked_user_info(match: re.Match[str], mask: str) -> str:
    user, colon, _ = match[2].partition(":")
    shown = f"{user}:{mask}" if colon else mask
    return f"{match[1]}{shown}@"


_DEFAULT = CredentialMasker()


def mask_credentials(text: str) -> str:
    """``text`` with every credential :class:`CredentialMasker` finds replaced by ``****``."""
    return _DEFAULT(text)


def mask_urls_in(value: Any) -> Any:
    """``value`` (JSON-like data: dicts, lists, strings) with URL credentials masked in every
    string, for ``--json`` output; containers are copied, never modified."""
    if isinstance(value, str):
        return mask_url_credentials(value)
    if isinstance(value, dict):
        return {key: mask_urls_in(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [mask_urls_in(item) for item in value]
    return value
