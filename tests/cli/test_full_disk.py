"""A run store on a full disk: the run ends with one error naming the store and what to do,
never a traceback. The disk is made full for the child process alone, with a limit on the
size of the files it may write (``RLIMIT_FSIZE``), which SQLite meets as a failed write."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import BLOGE, bloge, environment

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the file-size limit is Linux's")


def test_a_full_disk_is_one_error_naming_the_store_without_a_traceback(app: Path) -> None:
    assert bloge("store", "migrate", cwd=app).returncode == 0
    database = app / "var" / "bloge.db"
    allowed = database.stat().st_size + 4096

    def full_disk() -> None:  # in the child, before bloge starts
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a dead process
        resource.setrlimit(resource.RLIMIT_FSIZE, (allowed, allowed))

    for _ in range(2):
        run = subprocess.run(
            [str(BLOGE), "run", "customerSupport", "x" * 20_000], cwd=app,
            capture_output=True, text=True, env=environment(), preexec_fn=full_disk,
            check=False, timeout=60)
        assert run.returncode == 2, run.stderr
        assert "Traceback" not in run.stderr
        assert "run store sqlite:///var/bloge.db: cannot write" in run.stderr
        assert "free disk space" in run.stderr
    assert database.stat().st_size <= allowed
    assert bloge("runs", "list", cwd=app).returncode == 0  # the store is still readable
