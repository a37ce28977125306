"""The one exception tree of bloge.

```
BlogeError
├── BlogeUsageError            a developer mistake in how bloge is called
│   ├── UnknownOperatorError   a name missing from an OperatorRegistry ("did you mean …")
│   └── SettingsError          settings that cannot be loaded (bloge_config), located at
│                              file:line:column or the environment variable
├── DslError                   a problem in DSL source, located at file:line:column
│   ├── DslSyntaxError         the text does not parse
│   └── CompileError           it parses, but does not mean anything valid
├── ExpressionError            an expression failed while it was evaluated
├── OperatorInputError         an input does not fit an operator's declared input type
└── RunError                   a run failed (see bloge.agent for AgentRunError and friends)
    └── ProviderError          an LLM provider failed after its retries
```

Developer mistakes, DSL problems and run failures are separate branches so that callers can
catch exactly the kind they can act on. Third-party exceptions are translated at the boundary
with ``raise … from exc``.
"""

from __future__ import annotations

from collections.abc import Iterable

from bloge.core.suggest import did_you_mean, hint_for


class BlogeError(Exception):
    """Root of every error bloge raises on purpose."""


class BlogeUsageError(BlogeError):
    """A developer mistake: bloge was called in a way that cannot work."""


class UnknownOperatorError(BlogeUsageError, LookupError):
    """An operator name is not registered. The message offers the closest registered names."""

    def __init__(self, name: str, known: Iterable[str], *, purpose: str = "") -> None:
        self.name = name
        self.known = tuple(sorted(known))
        self.suggestions = did_you_mean(name, self.known)
        what = f"no {purpose} registered under {name!r}" if purpose else (
            f"unknown operator {name!r}"
        )
        listing = ", ".join(self.known) if self.known else "none"
        super().__init__(f"{what}{hint_for(self.suggestions)} (registered operators: {listing})")


class OperatorInputError(BlogeError, ValueError):
    """An input does not fit the type an operator declares for it (a dataclass or model)."""


class RunError(BlogeError):
    """A run failed for a reason outside the developer's code (model, network, limits)."""


class ProviderError(RunError):
    """An LLM provider call failed for good (after retries, or with a non-retryable status).

    ``provider`` names the provider ("openai", "anthropic", …), ``status_code`` is the HTTP
    status when there was one, and the message carries the server's own error text.
    ``request`` is the request body the server refused with that status (JSON text, secrets
    taken out, cut to a few KB), so that a server's quirk can be seen in the run's record; it
    is not part of the message.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status_code: int | None = None,
        retryable: bool = False,
        request: str | None = None,
    ) -> None:
        self.provider = provider
        self.status_code = status_code
        self.retryable = retryable
        self.request = request
        status = f" (HTTP {status_code})" if status_code is not None else ""
        super().__init__(f"{provider}{status}: {message}")


class ExpressionError(BlogeError):
    """Evaluating an expression failed: a type error, a division by zero, a bad function call.

    The message names the expression's source text and the position of the failing part.
    """

    def __init__(self, message: str, *, source: str, location: str) -> None:
        self.reason = message
        self.source = source
        self.location = location
        super().__init__(f"{location}: {message} in expression {source!r}")


class DslError(BlogeError):
    """A problem in DSL source text. ``str(error)`` starts with ``file:line:column:``.

    The message shows the offending source line with a caret under the column, and a
    "did you mean" suggestion where one exists.
    """

    def __init__(
        self,
        message: str,
        *,
        filename: str,
        line: int,
        column: int,
        source_line: str | None = None,
        width: int = 1,
    ) -> None:
        self.reason = message
        self.filename = filename
        self.line = line
        self.column = column
        # A line may hold a URL's credentials (a remote agent's address): never shown.
        self.source_line = None if source_line is None else _credentials_masked(source_line)
        self.rendered = _render(message, filename, line, column, source_line, width)
        self.errors: tuple[DslError, ...] = (self,)
        super().__init__(self.rendered)

    @staticmethod
    def collect(errors: Iterable[DslError]) -> DslError:
        """The first of ``errors``, carrying all of them in ``errors`` and in its message."""
        found = list(errors)
        first = found[0]
        if len(found) > 1:
            first.errors = tuple(found)
            first.args = ("\n".join(e.rendered for e in found),)
        return first


class DslSyntaxError(DslError):
    """The DSL text does not parse; the message says what was expected."""


class CompileError(DslError):
    """The DSL text parses but is not a valid definition (missing key, bad value, …)."""


#: How much of a source line an error shows, and how much of it before the column.
_SHOWN_COLUMNS = 160
_SHOWN_BEFORE = 60


def _render(
    message: str, filename: str, line: int, column: int, source_line: str | None, width: int
) -> str:
    head = f"{filename}:{line}:{column}: {message}"
    if source_line is None:
        return head
    gutter = f"{line:>5} | "
    text, at, width = _masked(source_line.expandtabs(1), column - 1, width)
    span = max(1, min(width, len(text) - at))
    if len(text) > _SHOWN_COLUMNS:
        # A long line (a generated file, a prompt on one line) is shown around the column.
        start = max(0, at - _SHOWN_BEFORE)
        end = min(len(text), start + _SHOWN_COLUMNS)
        span = max(1, min(span, end - at))
        text = ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
        at = at - start + (1 if start else 0)
    underline = "^" + "~" * (span - 1)
    return f"{head}\n{gutter}{text}\n{' ' * (len(gutter) - 2)}| {' ' * at}{underline}"


def _masked(text: str, at: int, width: int) -> tuple[str, int, int]:
    """``text`` with the credentials of its URLs masked, and the caret's offset ``at`` and
    ``width`` moved to underline the same characters in it."""
    masked = _credentials_masked(text)
    if masked is text:
        return text, at, width
    before = len(_credentials_masked(text[:at]))
    through = len(_credentials_masked(text[:at + width]))
    return masked, before, max(1, through - before)


def _credentials_masked(text: str) -> str:
    """``text`` with the credentials of its URLs masked (``text`` itself when it has none)."""
    if "@" not in text and "=" not in text:  # no user-info, no query parameter
        return text
    from bloge.core.masking import mask_url_credentials  # noqa: PLC0415 -- core.errors loads alone

    return mask_url_credentials(text)
