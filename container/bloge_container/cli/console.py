"""Output and exit codes shared by the commands: 0 success, 1 the run failed, 2 usage or
configuration error — always a message, never a traceback; 3 the run paused, waiting for
decisions on its tool calls; 130 and 143 a run stopped by Ctrl-C or SIGTERM."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import typer
from rich.console import Console

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_USAGE = 2
EXIT_PAUSED = 3  # the run waits for decisions on its tool calls (bloge approvals)
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports a process it ended

# Models, users and settings write the text printed here: no ":name:" emoji codes replaced.
out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def failure(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    """Print ``message`` and return the exit to raise: ``raise failure("…")``."""
    err.print(f"error: {message}", markup=False)
    return typer.Exit(code)


@contextlib.contextmanager
def reported_errors() -> Iterator[None]:
    """Turn bloge's errors into a message on stderr and the matching exit code."""
    from bloge import BlogeError, BlogeUsageError, DslError, RunError
    from bloge_config import SettingsError

    try:
        yield
    except (SettingsError, DslError) as exc:
        err.print(str(exc), markup=False)
        raise typer.Exit(EXIT_USAGE) from None
    except BlogeUsageError as exc:
        raise failure(str(exc), EXIT_USAGE) from None
    except RunError as exc:
        raise failure(str(exc), EXIT_RUN_FAILED) from None
    except BlogeError as exc:  # the run store cannot be used, say: fix the setup, try again
        raise failure(str(exc), EXIT_USAGE) from None
    except KeyboardInterrupt:
        err.print("interrupted", markup=False)
        raise typer.Exit(EXIT_INTERRUPTED) from None
