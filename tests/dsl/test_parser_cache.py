"""The parser's tables and the documents it parsed, cached between processes in a folder only
this user may write: each test parses in new processes, as every ``bloge`` command does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
PARSE = ("import pathlib, sys\n"
         "from bloge.dsl.parser import parse_document\n"
         "text = pathlib.Path(sys.argv[1]).read_text() if sys.argv[2] == 'file' else sys.argv[1]\n"
         "print(repr(parse_document(text, filename=sys.argv[1])))\n"
         "print('lark' in sys.modules)")
TEXT = 'agent a {\n  model = "m"\n}\n'


def parse_in_a_new_process(cache_home: Path, text: str = TEXT, **env: str) -> tuple[str, bool]:
    """The document's repr, and whether lark was loaded to parse it: ``text`` parsed as the
    file ``a.bloge`` holds it."""
    file = cache_home.with_name(f"{cache_home.name}-project") / "a.bloge"
    file.parent.mkdir(exist_ok=True)
    file.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", PARSE, str(file), "file"], capture_output=True,
                          text=True, env={**os.environ, "XDG_CACHE_HOME": str(cache_home), **env},
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    document, parsed = done.stdout.splitlines()
    return document, parsed == "True"


def tables(cache_home: Path) -> list[Path]:
    return sorted((cache_home / "bloge").glob("dsl-*.lark"))


def documents(cache_home: Path) -> list[Path]:
    return sorted((cache_home / "bloge" / "documents").glob("*.pickle"))


def test_the_tables_are_written_once_then_loaded(tmp_path: Path) -> None:
    parse_in_a_new_process(tmp_path)
    folder = tmp_path / "bloge"
    (cached,) = tables(tmp_path)
    assert folder.stat().st_mode & 0o777 == 0o700
    written = cached.stat().st_mtime_ns
    parse_in_a_new_process(tmp_path, TEXT + "// another text\n")
    assert cached.stat().st_mtime_ns == written


def test_a_damaged_cache_file_is_rebuilt(tmp_path: Path) -> None:
    parse_in_a_new_process(tmp_path)
    (cached,) = tables(tmp_path)
    cached.write_bytes(b"not lark's tables\n\x80\x04garbage")
    parse_in_a_new_process(tmp_path, TEXT + "// another text\n")
    assert not cached.read_bytes().startswith(b"not lark's tables")


def test_a_document_parsed_once_is_read_back_without_the_parser(tmp_path: Path) -> None:
    first, parsed = parse_in_a_new_process(tmp_path)
    assert parsed
    assert len(documents(tmp_path)) == 1
    again, parsed = parse_in_a_new_process(tmp_path)
    assert (again, parsed) == (first, False)


def test_an_edited_file_is_parsed_again_in_place_of_its_old_text(tmp_path: Path) -> None:
    parse_in_a_new_process(tmp_path)
    edited, parsed = parse_in_a_new_process(tmp_path, TEXT.replace('"m"', '"n"'))
    assert parsed
    assert "'n'" in edited
    assert len(documents(tmp_path)) == 1
    assert parse_in_a_new_process(tmp_path, TEXT.replace('"m"', '"n"')) == (edited, False)


def test_a_damaged_document_is_parsed_again_and_kept_anew(tmp_path: Path) -> None:
    first, _ = parse_in_a_new_process(tmp_path)
    (kept,) = documents(tmp_path)
    kept.write_bytes(b"\x80\x04garbage")
    again, parsed = parse_in_a_new_process(tmp_path)
    assert (again, parsed) == (first, True)
    assert parse_in_a_new_process(tmp_path) == (first, False)


def run_parse(cache_home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PARSE, *argv], capture_output=True, text=True,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache_home)}, check=False,
                          timeout=60)


def test_a_text_that_does_not_parse_is_not_kept(tmp_path: Path) -> None:
    broken = tmp_path / "broken.bloge"
    broken.write_text("agent {", encoding="utf-8")
    assert "DslSyntaxError" in run_parse(tmp_path / "cache", str(broken), "file").stderr
    assert documents(tmp_path / "cache") == []


def test_a_text_no_file_holds_is_not_kept(tmp_path: Path) -> None:
    # Texts a program makes (a user's, a request's) would fill the folder: files only.
    assert run_parse(tmp_path, TEXT, "text").returncode == 0
    assert documents(tmp_path) == []


def test_a_folder_others_may_write_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "bloge").mkdir()
    (tmp_path / "bloge").chmod(0o777)
    parse_in_a_new_process(tmp_path)
    assert list((tmp_path / "bloge").iterdir()) == []


def test_no_cache_when_turned_off_or_the_folder_cannot_be_made(tmp_path: Path) -> None:
    (tmp_path / "bloge").write_text("a file in the way")
    parse_in_a_new_process(tmp_path)
    parse_in_a_new_process(tmp_path / "elsewhere", BLOGE_NO_CACHE="1")
    assert not (tmp_path / "elsewhere").exists()
