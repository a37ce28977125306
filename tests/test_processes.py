"""The bounded wait on a child process's lines (tests/processes.py) fails saying what it
waited for, instead of hanging the suite."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.processes import said_until


def test_a_child_that_says_nothing_in_time_is_killed_and_named() -> None:
    # It waits on its stdin, which the test never writes to.
    with subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as child:
        with pytest.raises(pytest.fail.Exception) as failed:
            said_until(child, bool, '"ready"', seconds=0.5)
        assert child.wait() != 0  # killed
    assert 'did not say "ready" within 0.5 s; it said []' in str(failed.value)


def test_a_child_that_ends_first_is_named_with_what_it_wrote() -> None:
    script = "import sys; print('starting'); sys.exit('no store')"
    with (subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True) as child,
          pytest.raises(pytest.fail.Exception) as failed):
        said_until(child, lambda said: "ready" in said, '"ready"')
    assert ("ended (exit 1) before it said \"ready\"; it said ['starting']; its stderr: "
            "no store") in str(failed.value)
