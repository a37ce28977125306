"""The installed entry points bloge discovers DSL extensions and operators through."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import pytest

from bloge.core.entry_points import entry_points, refresh


def test_a_group_lists_what_the_installed_packages_advertise_in_it() -> None:
    # Read now, as the fresh reads below are: packages installed since an earlier test read
    # them (a build's wheel) are not in what this process kept.
    refresh()
    for group in ("console_scripts", "bloge.operators", "no.such.group"):
        assert sorted(entry_points(group=group)) == sorted(
            importlib.metadata.entry_points(group=group))


def test_the_installed_packages_are_read_once_whatever_the_groups_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entry_points(group="console_scripts")

    def read_again(**_: str) -> importlib.metadata.EntryPoints:
        raise AssertionError("the installed packages' metadata was read again")

    monkeypatch.setattr(importlib.metadata, "entry_points", read_again)
    entry_points(group="bloge.dsl.extensions")
    entry_points(group="bloge.operators")


def test_refresh_reads_the_installed_packages_again(monkeypatch: pytest.MonkeyPatch) -> None:
    entry_points(group="console_scripts")
    reads: list[str] = []
    read = importlib.metadata.entry_points

    def counted() -> Any:  # SelectableGroups on Python 3.11, EntryPoints since
        reads.append("read")
        return read()

    monkeypatch.setattr(importlib.metadata, "entry_points", counted)
    refresh()
    assert sorted(entry_points(group="console_scripts")) == sorted(read(group="console_scripts"))
    entry_points(group="bloge.operators")
    assert reads == ["read"]
