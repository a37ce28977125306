"""Waiting, with a bound, for what a child process a test started prints.

A pipe's read has no timeout of its own: a child that hangs before it says what the test
waits for would hang the suite. :func:`said_until` reads in a thread and, past the bound,
kills the child (which ends the read left waiting) and fails saying what it waited for.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import pytest

#: How long a test waits for a child process to say something: far longer than any takes on
#: a busy 2-core machine (under a minute), so that only what is stuck fails, and fails saying
#: what it waited for instead of hanging the suite.
WAIT_SECONDS = 120.0


def said_until(process: subprocess.Popen[str], wanted: Callable[[list[str]], bool],
               what: str, seconds: float = WAIT_SECONDS, *,
               stream: Literal["stdout", "stderr"] = "stdout") -> list[str]:
    """The lines ``process`` prints on its ``stream`` (stripped) until ``wanted`` holds of
    them. Fails, naming ``what``, the lines read and (when it is a pipe) what the process
    wrote to stderr, if it ends first or has not said it within ``seconds``; it is killed
    then. Blocking: an async test calls it through ``asyncio.to_thread``."""
    pipe = process.stdout if stream == "stdout" else process.stderr
    assert pipe is not None
    said: list[str] = []
    deadline = time.monotonic() + seconds
    with ThreadPoolExecutor(1) as reader:
        while not wanted(said):
            read = reader.submit(pipe.readline)
            try:
                line = read.result(timeout=max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                process.kill()
                pytest.fail(f"the process {_named(process)} did not say {what} within "
                            f"{seconds:g} s; it said {said}{_stderr(process)}")
            if not line:
                pytest.fail(f"the process {_named(process)} ended (exit {process.wait()}) "
                            f"before it said {what}; it said {said}{_stderr(process)}")
            said.append(line.strip())
    return said


def _named(process: subprocess.Popen[str]) -> str:
    """``process``'s command line, as the test gave it."""
    args = process.args
    return " ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args)


def _stderr(process: subprocess.Popen[str]) -> str:
    """What ``process``, which has ended or been killed, wrote to its stderr pipe, if any."""
    if process.stderr is None:
        return ""
    process.wait()
    return f"; its stderr: {process.stderr.read()}"
