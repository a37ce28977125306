"""The parser's tables, cached between processes in a folder only this user may write: each
test parses in new processes, as every ``bloge`` command does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
PARSE = "from bloge.dsl.parser import parse_document; print(parse_document('agent a {}'))"


def parse_in_a_new_process(cache_home: Path, **env: str) -> None:
    done = subprocess.run([sys.executable, "-c", PARSE], capture_output=True, text=True,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache_home), **env},
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_the_tables_are_written_once_then_loaded(tmp_path: Path) -> None:
    parse_in_a_new_process(tmp_path)
    folder = tmp_path / "bloge"
    (cached,) = folder.iterdir()
    assert folder.stat().st_mode & 0o777 == 0o700
    written = cached.stat().st_mtime_ns
    parse_in_a_new_process(tmp_path)
    assert cached.stat().st_mtime_ns == written


def test_a_damaged_cache_file_is_rebuilt(tmp_path: Path) -> None:
    parse_in_a_new_process(tmp_path)
    (cached,) = (tmp_path / "bloge").iterdir()
    cached.write_bytes(b"not lark's tables\n\x80\x04garbage")
    parse_in_a_new_process(tmp_path)
    assert not cached.read_bytes().startswith(b"not lark's tables")


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
