"""The README's quick start installs only ``[dev]``: a test that needs another extra skips and
says which (CI, with ``BLOGE_REQUIRE_SERVICES=1``, fails instead), and pytest prints why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: the tests that opened a postgresql:// store without asking whether its driver is installed
NEED_THE_DRIVER = (
    "tests/autopilot/test_stored.py::test_a_store_that_is_down_applies_nothing",
    "tests/store/test_faults.py::test_postgres_down_is_named_with_the_password_masked",
)
# pytest in a fresh interpreter where psycopg cannot be imported, as after `pip install '.[dev]'`
WITHOUT_PSYCOPG = (
    "import sys; sys.modules['psycopg'] = sys.modules['psycopg_pool'] = None; "
    "import pytest; sys.exit(pytest.main(sys.argv[1:]))"
)


def pytest_without_psycopg(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("BLOGE_")}
    environment.update(env)
    return subprocess.run([sys.executable, "-c", WITHOUT_PSYCOPG, "-p", "no:cacheprovider",
                           *args], capture_output=True, text=True, cwd=REPO, env=environment,
                          check=False, timeout=300)


def test_a_test_needing_an_extra_skips_and_the_summary_says_why() -> None:
    result = pytest_without_psycopg(*NEED_THE_DRIVER, env={})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 skipped" in result.stdout
    # -rs comes from the addopts: the user sees the reason without asking for it
    assert "SKIPPED [2] tests/store/conftest.py" in result.stdout
    assert "psycopg is not installed (pip install -e '.[postgres]')" in result.stdout


@pytest.mark.parametrize("test", NEED_THE_DRIVER)
def test_ci_fails_a_test_whose_extra_is_missing(test: str) -> None:
    result = pytest_without_psycopg(test, env={"BLOGE_REQUIRE_SERVICES": "1"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BLOGE_REQUIRE_SERVICES=1 but psycopg is not installed" in result.stdout
