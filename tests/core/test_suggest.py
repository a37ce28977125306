"""The one "did you mean" of the framework, the settings and the command line."""

from __future__ import annotations

from bloge.core.suggest import did_you_mean, did_you_mean_hint, hint_for


def test_the_closest_names_come_best_first_and_a_case_variant_wins() -> None:
    assert did_you_mean("retyr", ["retry", "reply", "timeout"]) == ["retry", "reply"]
    assert did_you_mean("Lookup", ["lookups", "lookup"]) == ["lookup", "lookups"]


def test_a_hint_names_the_closest_quoted_or_as_shown() -> None:
    assert did_you_mean_hint("wether", ["weather"]) == "; did you mean 'weather'?"
    assert did_you_mean_hint("lenght", ["length"], shown="{}()") == "; did you mean length()?"


def test_no_close_name_gives_what_the_caller_says_otherwise() -> None:
    assert did_you_mean_hint("zzz", ["weather"]) == ""
    assert did_you_mean_hint("zzz", ["weather"], otherwise=" (known: weather)") == (
        " (known: weather)")


def test_a_stricter_cutoff_keeps_only_the_nearer_names() -> None:
    assert did_you_mean_hint("wethr", ["weather"], cutoff=0.95) == ""
    assert hint_for(["a", "b"]) == "; did you mean 'a'?"
