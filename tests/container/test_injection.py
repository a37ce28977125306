"""``bloge_container.injection``: dependency-injector loaded without the starlette import of its
wiring, and what that relies on in dependency-injector itself. Each case runs in a fresh
interpreter: in this one, other tests have long loaded both."""

from __future__ import annotations

import subprocess
import sys

from tests.test_imports import ROOT, loaded_after


def run_fresh(code: str) -> None:
    """``code`` in a fresh interpreter; its failed assertion fails the test."""
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


def test_dependency_injector_loads_without_starlette() -> None:
    loaded = loaded_after("from bloge_container.injection import containers, providers",
                          "dependency_injector", "starlette")
    assert "dependency_injector.containers" in loaded
    assert [name for name in loaded if name.startswith("starlette")] == []


def test_starlette_loads_as_usual_once_dependency_injector_is_loaded() -> None:
    run_fresh("import sys\n"
              "import bloge_container.injection\n"
              "assert 'starlette.requests' not in sys.modules, 'the block is left behind'\n"
              "from starlette.requests import Request\n")


def test_a_starlette_loaded_earlier_is_left_in_place() -> None:
    run_fresh("import sys\n"
              "import starlette.requests as requests\n"
              "import bloge_container.injection\n"
              "assert sys.modules['starlette.requests'] is requests\n")


def test_dependency_injectors_containers_import_starlette_where_it_is_installed() -> None:
    """Why ``injection`` exists: when this fails, dependency-injector no longer imports
    starlette as it loads, and ``injection`` can go."""
    assert loaded_after("from dependency_injector import containers",
                        "starlette.requests") == ["starlette.requests"]


def test_dependency_injectors_wiring_passes_over_a_starlette_that_cannot_be_imported() -> None:
    """What ``injection`` relies on: wiring treats ``starlette.requests`` as optional. When
    this fails, blocking the import breaks dependency-injector and ``injection`` must go."""
    run_fresh("import sys\n"
              "sys.modules['starlette.requests'] = None\n"
              "from dependency_injector import containers, providers, wiring\n"
              "filters = [f.__name__ for f in wiring.INSPECT_EXCLUSION_FILTERS]\n"
              "assert 'is_starlette_request_cls' not in filters, filters\n")
