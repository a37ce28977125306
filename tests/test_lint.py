"""The lint policy (STYLE.md 13-14): ruff selects every rule, and every exception says why."""

from __future__ import annotations

import re
import tokenize
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("bloge", "config", "container", "tests", "examples", "bench")
#: A rule code in a list of the ruff configuration: `"PLR2004",`
RULE_ENTRY = re.compile(r'^\s*"[A-Z]+[0-9]*",')
NOQA = re.compile(r"#\s*noqa\b(?P<codes>:\s*[A-Z]+[0-9]*(?:\s*,\s*[A-Z]+[0-9]*)*)?(?P<rest>.*)")
TYPE_IGNORE = re.compile(r"#\s*type:\s*ignore\b(?P<codes>\[[^\]]*\])?(?P<rest>.*)")


def ruff_lines() -> list[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index("[tool.ruff.lint]")
    end = text.index("\n[tool.", text.index("[tool.ruff.lint.per-file-ignores]"))
    return text[start:end].splitlines()


def comments(path: Path) -> list[tuple[int, str]]:
    with path.open("rb") as source:
        return [(token.start[0], token.string) for token in tokenize.tokenize(source.readline)
                if token.type == tokenize.COMMENT]


def python_files() -> list[Path]:
    return [p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))]


def test_ruff_selects_every_rule() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["ruff"]["lint"]["select"] == ["ALL"]


def test_every_rule_ruff_ignores_says_why() -> None:
    unexplained = [line.strip() for line in ruff_lines()
                   if RULE_ENTRY.match(line) and "#" not in line.split('",', 1)[1]]
    assert unexplained == []


@pytest.mark.parametrize("path", python_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_noqa_and_type_ignore_names_its_codes_and_says_why(path: Path) -> None:
    bare = []
    for line, comment in comments(path):
        for pattern, reason in ((NOQA, r"\s+--\s+\S"), (TYPE_IGNORE, r"\s+#\s*\S")):
            found = pattern.search(comment)
            if found and not (found["codes"] and re.match(reason, found["rest"])):
                bare.append(f"{path.name}:{line}: {comment}")
    assert bare == []
