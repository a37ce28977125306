"""What importing bloge loads: packages re-export their names lazily (``bloge.core.exports``),
so that ``import bloge`` and a module of one package do not load the rest of bloge, asyncio,
the DSL parser or the HTTP stack before they are used; and every exported name still resolves.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Every package whose ``__init__`` exports its names through ``lazy_exports``.
LAZY_PACKAGES = sorted(
    ".".join(path.relative_to(ROOT).parent.parts)
    for path in (ROOT / "bloge").rglob("__init__.py")
    if "lazy_exports(" in path.read_text(encoding="utf-8")
)
#: Those packages, and the modules that export names the same way (``bloge.agent.runtime``).
LAZY_MODULES = sorted([*LAZY_PACKAGES, *(
    ".".join(path.relative_to(ROOT).with_suffix("").parts)
    for path in (ROOT / "bloge").rglob("*.py")
    if path.name != "__init__.py" and path != ROOT / "bloge" / "core" / "exports.py"
    and "lazy_exports(" in path.read_text(encoding="utf-8")
)])


def source(module: str) -> Path:
    """The file of ``module``: a package's ``__init__``, or the module's own file."""
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def loaded_after(code: str, *packages: str) -> list[str]:
    """The modules of ``packages`` (each one and what is below it) that a fresh interpreter
    has loaded after running ``code``."""
    script = (f"import sys\n{code}\nimport json\n"
              f"print(json.dumps(sorted(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=120)
    return [name for name in json.loads(run.stdout)
            if any(name == p or name.startswith(p + ".") for p in packages)]


def test_the_lazy_packages_are_the_curated_ones() -> None:
    assert {"bloge", "bloge.agent", "bloge.core", "bloge.dsl", "bloge.journal", "bloge.llm",
            "bloge.llm.providers", "bloge.rpc"} <= set(LAZY_PACKAGES)
    assert "bloge.agent.runtime" in LAZY_MODULES


def test_importing_bloge_loads_none_of_its_parts() -> None:
    assert loaded_after("import bloge", "bloge") == ["bloge", "bloge.core", "bloge.core.exports"]


def test_importing_bloge_loads_no_parser_no_metadata_no_event_loop_and_no_http() -> None:
    heavy = ("lark", "importlib.metadata", "asyncio", "httpx", "tenacity", "pydantic",
             "structlog")
    assert loaded_after("import bloge", *heavy) == []


def test_a_run_of_a_built_agent_parses_nothing() -> None:
    """A run of a built agent parses nothing: lark and importlib.metadata load when used."""
    code = ("from bloge import AgentBuilder, LlmChatOperator, OperatorRegistry\n"
            "from bloge.llm import ScriptedProvider\n"
            "registry = OperatorRegistry({'llmChat': LlmChatOperator(ScriptedProvider('Hi.'))})\n"
            "agent = AgentBuilder.create('a', registry=registry).model('m').to_operator('a')\n"
            "assert agent.execute('Hello').content == 'Hi.'")
    assert loaded_after(code, "lark", "importlib.metadata") == []


def test_a_module_of_core_does_not_load_the_rest_of_core() -> None:
    assert loaded_after("import bloge.core.errors", "bloge", "asyncio") == [
        "bloge", "bloge.core", "bloge.core.errors", "bloge.core.exports", "bloge.core.suggest"]


def test_the_retry_policy_loads_no_http_client() -> None:
    assert loaded_after("from bloge.llm.providers.retry import RetryPolicy", "httpx") == []


def test_an_in_process_rpc_transport_loads_no_http_client() -> None:
    assert loaded_after("from bloge import rpc; rpc.InProcessTransport()", "httpx") == []


def test_the_run_store_loads_no_structlog() -> None:
    # A recorded run's callbacks are redacted as the journal's events, with no structlog.
    assert loaded_after("import bloge.store", "structlog", "bloge.journal.journal") == []


def test_the_journal_chain_and_its_test_sink_load_no_structlog() -> None:
    # A recorded run's events pass the journal's chain: stamping and dropping them needs no
    # structlog; its file and stream sinks load it when used.
    code = ("from bloge.journal.journal import EventJournal\n"
            "journal = EventJournal.in_memory()\n"
            "journal.emit('hello', answer=42)\n"
            "assert journal.sink.events[0]['timestamp'].endswith('Z')")
    assert loaded_after(code, "structlog") == []


def test_the_settings_load_no_pydantic_settings() -> None:
    # bloge_config owns the sources: its settings are a plain pydantic model.
    assert loaded_after("import bloge_config; bloge_config.load_settings(environ={})",
                        "pydantic_settings", "dotenv") == []


BLOGE_RUN = ("import contextlib, io, os, sys\n"
             "sys.argv = ['bloge', 'run', 'customerSupport', 'How do I reset my password?']\n"
             "os.environ['BLOGE_STORE__URL'] = 'memory://'\n"
             "from bloge_container.cli.app import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as answer:\n"
             "    try:\n"
             "        main()\n"
             "    except SystemExit as exc:\n"
             "        assert exc.code == 0, exc.code\n"
             "assert 'KB-RESET-001' in answer.getvalue(), answer.getvalue()\n")


def test_bloge_run_loads_what_a_run_needs_only(tmp_path: Path) -> None:
    """``bloge run`` (the quick start's offline run) loads neither the journal's renderers
    (structlog), the retries of HTTP and remote calls (tenacity), rich's spinner, the store's
    approvals and reports nor the web framework (starlette: dependency-injector's wiring looks
    for it); nor the parser (lark) once its DSL files were parsed by an earlier command."""
    run = (f"import os\nos.environ['XDG_CACHE_HOME'] = {str(tmp_path)!r}\n"
           "os.environ.pop('BLOGE_NO_CACHE', None)\n" + BLOGE_RUN)
    assert loaded_after(run, "lark")  # the first parses them, and keeps what they parse to
    assert loaded_after(run, "lark", "structlog", "tenacity", "rich.status",
                        "rich.table", "bloge.store.approvals", "bloge.store.timeline",
                        "starlette", "anyio") == []


def test_bloge_run_collects_garbage_once_the_application_is_loaded() -> None:
    """``bloge`` starts with the collector off (what start-up makes lives as long as the
    command); the run itself has it on, what start-up made frozen out of its way."""
    run = ("import gc\n"
           "import bloge_container.cli.run as command\n"
           "run_agent, seen = command.run_agent, []\n"
           "def observed(*args, **kwargs):\n"
           "    seen.append((gc.isenabled(), gc.get_freeze_count()))\n"
           "    return run_agent(*args, **kwargs)\n"
           "command.run_agent = observed\n"
           "assert gc.isenabled()\n" + BLOGE_RUN +
           "[(enabled, frozen)] = seen\n"
           "assert enabled and frozen > 10_000, seen\n")
    subprocess.run([sys.executable, "-c", run], check=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("package", LAZY_MODULES)
def test_every_exported_name_resolves_in_a_fresh_interpreter(package: str) -> None:
    # A fresh interpreter: in this one, other tests have long imported every module.
    code = (f"import {package} as package\n"
            "names = [n for n in package.__all__ if n != '__version__']\n"
            f"exec('from {package} import ' + ', '.join(names))\n"
            "assert all(getattr(package, n) is eval(n) for n in names)\n"
            "assert set(package.__all__) <= set(dir(package))\n"
            "try:\n"
            "    package.no_such_name\n"
            "except AttributeError as exc:\n"
            "    assert exc.name == 'no_such_name' and 'no_such_name' in str(exc), exc\n"
            "else:\n"
            "    raise AssertionError('no AttributeError')\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_no_exported_name_is_lost_to_a_submodule_of_that_name(package: str) -> None:
    # Loading a submodule binds it in its package under its own name: an exported name that
    # is also a submodule's must be bound eagerly (bloge.rpc.proxy), or the module wins.
    code = (f"import importlib, pkgutil, types, {package} as package\n"
            "for sub in pkgutil.iter_modules(package.__path__):\n"
            "    try:\n"
            "        importlib.import_module(f'{package.__name__}.{sub.name}')\n"
            "    except Exception as exc:  # an extra's package, the extra not installed\n"
            "        if \"pip install 'bloge[\" not in str(exc):\n"
            "            raise\n"
            "modules = [n for n in package.__all__ if isinstance(getattr(package, n),"
            " types.ModuleType)]\n"
            "assert not modules, modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


def type_checking_imports(package: str) -> dict[str, set[str]]:
    """Module → names, as the ``if TYPE_CHECKING:`` block of ``package`` imports them."""
    tree = ast.parse(source(package).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    found: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom), ast.unparse(node)
        assert node.module, ast.unparse(node)
        assert all(alias.asname == alias.name for alias in node.names), ast.unparse(node)
        found.setdefault(node.module, set()).update(alias.name for alias in node.names)
    return found


def eager_names(package: str) -> set[str]:
    """The names ``package`` re-exports at run time (outside TYPE_CHECKING),
    ``from m import X as X``."""
    tree = ast.parse(source(package).read_text(encoding="utf-8"))
    return {alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
            and node.module and node.module.startswith("bloge.")
            for alias in node.names if alias.asname == alias.name}


@pytest.mark.parametrize("package", LAZY_MODULES)
def test_what_type_checkers_see_is_what_the_package_exports(package: str) -> None:
    imported = type_checking_imports(package)
    exported = set(importlib.import_module(package).__all__) - {"__version__"}
    assert set().union(*imported.values()) | eager_names(package) == exported
