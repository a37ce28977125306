"""Errors of the application shell."""

from __future__ import annotations

from bloge import BlogeUsageError


class ConfigurationError(BlogeUsageError):
    """The application cannot be assembled from its settings: an import path that does not
    resolve, a DSL location with no files, two agents with one id, a provider without a key…
    The message names the setting and what to change."""
