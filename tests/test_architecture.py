"""The import rules of DESIGN.md section 2, the surfaces packages are imported through, and the
pinned public surface."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest
import setuptools

import bloge
import bloge.llm

ROOT = Path(__file__).resolve().parents[1]

#: package → the first-party packages it may import (besides itself)
ALLOWED = {
    "bloge.core": set(),
    "bloge.llm": {"bloge.core"},
    "bloge.dsl": {"bloge.core"},
    "bloge.agent": {"bloge.core", "bloge.llm", "bloge.dsl"},
    "bloge.journal": {"bloge.core", "bloge.llm", "bloge.agent"},
    "bloge.store": {"bloge.core", "bloge.llm", "bloge.agent", "bloge.journal"},
    "bloge.autopilot": {"bloge.core", "bloge.llm", "bloge.agent", "bloge.journal",
                        "bloge.store"},
    "bloge.rpc": {"bloge.core"},
    "bloge.tracing": {"bloge.core"},
    "bloge.mcp": {"bloge.core", "bloge.llm", "bloge.agent"},
    "bloge.a2a": {"bloge.core", "bloge.llm", "bloge.agent"},
    "bloge.temporal": {"bloge.core", "bloge.llm", "bloge.agent", "bloge.journal",
                       "bloge.store"},
    "bloge.eval": {"bloge.core", "bloge.llm", "bloge.agent", "bloge.journal", "bloge.store"},
    "bloge.server": {"bloge.core", "bloge.llm", "bloge.agent", "bloge.journal", "bloge.store",
                     "bloge.autopilot", "bloge.mcp", "bloge.a2a", "bloge.rpc"},
}
#: package → the modules of it that code outside it may import: the package (its public
#: names) and the surface that the packages plugging into it build on
SURFACES = {
    "bloge.agent": {"bloge.agent", "bloge.agent.runtime"},
    "bloge.store": {"bloge.store", "bloge.store.recording", "bloge.store.sql.script"},
}
#: surface module → the only packages that may import it: Temporal's recorder of runs writes
#: as the store's recorder does; the autopilot's audit ledger runs its own scripts through
#: the store's transaction driver (Store.run_script).
SURFACE_USERS = {"bloge.store.recording": {"bloge.temporal"},
                 "bloge.store.sql.script": {"bloge.autopilot"}}
FIRST_PARTY = ("bloge", "bloge_config", "bloge_container", "examples")
CONTAINER_ONLY = ("dependency_injector",)
SOURCE_ROOTS = ("config", "container")


def module_name(path: Path) -> str:
    """The import name of a source file; config/ and container/ are source roots."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[0] in SOURCE_ROOTS:
        parts = parts[1:]
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """The modules ``path`` imports; ``from package import submodule`` counts as the
    submodule's."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = module_name(path)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: -node.level]
                found.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names
                             if imports_a_submodule(node.module, alias.name))
    return found


def imports_a_submodule(package: str, name: str) -> bool:
    """Whether ``from package import name`` imports a module of ours: a file or a package
    under ``bloge/`` by that name that the package does not shadow with a value of its own
    (``bloge.store.follow`` is the function ``follow``)."""
    path = ROOT.joinpath(*package.split("."), name)
    if not package.startswith("bloge") or not (
            path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()):
        return False
    value = getattr(importlib.import_module(package), name, None)
    return value is None or isinstance(value, types.ModuleType)


def package_of(name: str, packages: list[str]) -> str | None:
    return next((p for p in packages if name == p or name.startswith(p + ".")), None)


def python_files(*folders: str) -> list[Path]:
    return [p for folder in folders for p in sorted((ROOT / folder).rglob("*.py"))]


@pytest.mark.parametrize("path", python_files("bloge"), ids=lambda p: str(p.relative_to(ROOT)))
def test_framework_layers_import_only_what_they_may(path: Path) -> None:
    module = module_name(path)
    layers = sorted(ALLOWED, key=len, reverse=True)
    layer = package_of(module, layers)
    for name in imports_of(path):
        assert not name.startswith(("bloge_config", "bloge_container", *CONTAINER_ONLY)), (
            f"{module} imports {name}: the framework never knows the application shell")
        if layer is None or not name.startswith("bloge"):
            continue
        target = package_of(name, layers)
        if target is None:
            assert name == "bloge", f"{module} imports {name}, above its layer {layer}"
            continue
        assert target == layer or target in ALLOWED[layer], (
            f"{module} ({layer}) imports {name} ({target}); allowed: {sorted(ALLOWED[layer])}")


@pytest.mark.parametrize("path", python_files("bloge", "container"),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_packages_are_imported_from_outside_only_through_their_surfaces(path: Path) -> None:
    module = module_name(path)
    importer = package_of(module, sorted(ALLOWED, key=len, reverse=True)) or module
    for name in imports_of(path):
        package = package_of(name, list(SURFACES))
        if package is None or package_of(module, [package]) is not None:
            continue
        may = name in SURFACES[package] and importer in SURFACE_USERS.get(name, {importer})
        assert may, (
            f"{module} imports {name}: outside {package}, import one of "
            f"{sorted(SURFACES[package])}, a module of SURFACE_USERS only from the packages "
            "it names")


#: The framework modules bloge_config may import, and why: each imports only the standard
#: library (and the others of this list), so the settings need nothing of the framework's
#: dependencies.
CONFIG_MAY_IMPORT = {
    "bloge.core.errors": "SettingsError belongs to the one error tree",
    "bloge.core.masking": "the settings mask credentials in URLs by the same rules as the "
                          "journal and the providers",
    "bloge.core.suggest": 'a misspelled key gets the "did you mean" of every misspelled name',
}


@pytest.mark.parametrize("path", python_files("config"), ids=lambda p: str(p.relative_to(ROOT)))
def test_config_knows_only_settings_libraries(path: Path) -> None:
    for name in imports_of(path) - CONFIG_MAY_IMPORT.keys():
        assert name.startswith("bloge_config") or not name.startswith(
            ("bloge", *CONTAINER_ONLY)), name


@pytest.mark.parametrize("module", sorted(CONFIG_MAY_IMPORT))
def test_what_config_imports_of_the_framework_is_standard_library(module: str) -> None:
    path = ROOT / (module.replace(".", "/") + ".py")
    for name in imports_of(path) - CONFIG_MAY_IMPORT.keys():
        assert name.split(".")[0] in sys.stdlib_module_names, (
            f"{module} imports {name}: bloge_config imports it ({CONFIG_MAY_IMPORT[module]}), "
            "so it may import only the standard library")


def test_the_distribution_installs_only_bloge_names() -> None:
    # A user's own config.py or container.py must never meet a package of ours by that name.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    find = pyproject["tool"]["setuptools"]["packages"]["find"]
    top_level = {
        name.split(".")[0]
        for where in find["where"]
        for name in setuptools.find_packages(str(ROOT / where), include=find["include"])
    }
    assert top_level == {"bloge", "bloge_config", "bloge_container"}
    assert pyproject["project"]["scripts"]["bloge"] == "bloge_container.cli:main"


#: The repository's top level is fixed (DESIGN.md section 1); examples keep their files inside.
#: Issue 28 adds ``docs/`` for the generated settings reference (``docs/settings.md``).
TOP_LEVEL = {".ci", ".gitignore", "LICENSE", "README.md", "bench", "bloge", "config",
             "container", "docs", "examples", "pyproject.toml", "settings.yaml", "tests"}


def test_the_repository_top_level_is_the_fixed_list() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no tracked files to look at")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True, timeout=60).stdout.splitlines()
    assert {path.split("/")[0] for path in tracked} <= TOP_LEVEL


def test_only_the_container_knows_dependency_injector() -> None:
    for path in python_files("bloge", "config"):
        assert not any(n.startswith(CONTAINER_ONLY) for n in imports_of(path)), path


def test_the_public_surface_is_pinned() -> None:
    assert sorted(bloge.__all__) == sorted([
        "Agent", "AgentBuilder", "AgentCallbackContext", "AgentCheckpoint", "AgentDef", "AgentDslCompiler",
        "AgentExecutionListener", "AgentInput", "AgentLoopOperator", "AgentMemoryStrategy",
        "AgentOutput", "AgentRunError", "AgentStreamChunk", "AgentToolRef", "AgentUsage",
        "BlogeError", "BlogeUsageError", "BudgetExceededError", "CompileError", "ConversationMemory", "Done",
        "DslCompiler", "DslError", "DslExtensionProvider", "DslSyntaxError", "Expression",
        "ExpressionError", "Graph", "GuardrailTrippedError", "Handoff", "JsonCodec", "LlmCalledPayload", "LlmChatOperator",
        "LlmMessage", "LlmProvider", "LlmStreamingChatOperator", "LoopExitedPayload",
        "MaxTurnsExceededError", "Node", "Operator", "OperatorContext", "OperatorInputError",
        "OperatorMetadata", "OperatorRegistry", "OutputValidationError", "Partial",
        "ProviderError", "RunError", "RunPaused",
        "StreamingAgentLoopOperator", "SubAgentChunk", "Token", "Tool", "ToolCall",
        "ToolCompletedPayload",
        "ToolDefinition", "ToolDispatchedPayload", "ToolEnd", "ToolStart", "TurnStartedPayload",
        "UnknownOperatorError", "__version__", "agent_operator", "open_store",
    ])
    assert sorted(bloge.llm.__all__) == sorted([
        "AnthropicProvider", "ClaudeProvider", "OpenAIChatProvider", "RetryPolicy",
        "ContentPart", "FunctionProvider", "HeuristicTokenEstimator", "ImagePart", "LLM_CHAT",
        "LLM_STREAMING_CHAT", "LlmChatOperator", "LlmChunk", "LlmMessage", "LlmProvider",
        "LlmRequest", "LlmResponse", "LlmStreamingChatOperator", "Role", "ScriptedProvider",
        "TextPart", "TokenEstimator", "ToolCall", "ToolDefinition", "tool_call_response",
    ])
    for name in bloge.__all__:
        assert hasattr(bloge, name), name
    for name in bloge.llm.__all__:
        assert hasattr(bloge.llm, name), name

