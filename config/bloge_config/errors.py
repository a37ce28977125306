"""The one error the config package raises."""

from __future__ import annotations

from bloge.core.errors import BlogeUsageError


class SettingsError(BlogeUsageError, ValueError):
    """The settings cannot be loaded: a file, a variable or an override says something wrong.

    The message is one paragraph that starts with where the problem is (``file:line:column``,
    ``environment variable NAME``, ``override`` …), names the key (``bloge.llm.provider``) and
    says what was expected. Secret values never appear in it. ``key`` and ``source`` repeat the
    key path and the source of the (first) problem for callers that want them separately; either
    is ``None`` when the problem has none (a file that does not parse has no key).
    """

    def __init__(self, message: str, *, key: str | None = None, source: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.source = source
