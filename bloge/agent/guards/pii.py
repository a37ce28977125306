"""Finding personal data and secrets in text, for :class:`~bloge.agent.guards.PiiGuard`.

Secrets are found by the journal's own rules (:class:`~bloge.core.masking.CredentialMasker`:
``password=…`` pairs, ``Authorization: Bearer …``, URL user-info, credential query
parameters) plus the shapes of well-known keys; personal data by patterns checked further
where a checksum exists (card numbers by Luhn, IBANs by mod 97), so that order numbers and
timestamps are not taken for them. Findings are counts by kind: never the text found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from bloge.core.masking import CredentialMasker

#: The kinds a :class:`~bloge.agent.guards.PiiGuard` looks for by default.
PII_KINDS: tuple[str, ...] = ("email", "phone", "credit_card", "iban", "ssn", "credential",
                              "api_key", "private_key", "secret")

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
# An international number (+ and 8 to 15 digits) or a North American one; separators allowed.
_PHONE = re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d(?:[ .-]?\d){6,13}"
                    r"|\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b)")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
_SSN = re.compile(r"(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)")
_API_KEY = re.compile(
    r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"          # OpenAI, Anthropic
    r"|AKIA[0-9A-Z]{16}"                                  # AWS access key id
    r"|gh[pousr]_[A-Za-z0-9]{36,}"                        # GitHub
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"                     # Slack
    r"|AIza[0-9A-Za-z_-]{35}"                             # Google
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"  # a JWT
)
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z ]+ )?PRIVATE KEY-----")
_MASK = "\x00"
_MASKER = CredentialMasker(mask=_MASK)


def find_pii(text: str, kinds: Iterable[str] = PII_KINDS,
             secrets: Iterable[str] = ()) -> Mapping[str, int]:
    """How many of each kind of ``kinds`` ``text`` holds (kinds found only); ``secrets``
    are exact values to look for, counted as ``secret``."""
    wanted = frozenset(kinds)
    found: dict[str, int] = {}

    def count(kind: str, number: int) -> None:
        if number and kind in wanted:
            found[kind] = found.get(kind, 0) + number

    count("email", len(_EMAIL.findall(text)))
    count("credit_card", sum(1 for m in _CARD.finditer(text) if _luhn(m[0])))
    count("iban", sum(1 for m in _IBAN.finditer(text) if _iban_valid(m[0])))
    count("ssn", len(_SSN.findall(text)))
    count("phone", sum(1 for m in _PHONE.finditer(text) if not _luhn(m[0])))
    count("api_key", len(_API_KEY.findall(text)))
    count("private_key", len(_PRIVATE_KEY.findall(text)))
    if "credential" in wanted:
        count("credential", _MASKER(text).count(_MASK))
    count("secret", sum(text.count(secret) for secret in secrets if secret))
    return found


def _digits(text: str) -> str:
    return "".join(char for char in text if char.isdigit())


def _luhn(text: str) -> bool:
    digits = _digits(text)
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _iban_valid(text: str) -> bool:
    compact = text.replace(" ", "")
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(char, 36)) for char in rearranged)
    return int(number) % 97 == 1
