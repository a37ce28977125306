"""The import rules of DESIGN.md section 2 and the pinned public surface."""

from __future__ import annotations

import ast
import subprocess
import tomllib
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
    "bloge.mcp": {"bloge.core", "bloge.llm", "bloge.agent"},
    "bloge.temporal": {"bloge.core", "bloge.llm", "bloge.agent", "bloge.journal",
                       "bloge.store"},
}
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
    return found


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


@pytest.mark.parametrize("path", python_files("config"), ids=lambda p: str(p.relative_to(ROOT)))
def test_config_knows_only_settings_libraries(path: Path) -> None:
    # bloge.core.errors: SettingsError belongs to the one error tree; bloge.core.masking: the
    # settings mask credentials in URLs by the same rules as the journal and the providers.
    for name in imports_of(path) - {"bloge.core.errors", "bloge.core.masking"}:
        assert name.startswith("bloge_config") or not name.startswith(
            ("bloge", *CONTAINER_ONLY)), name


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
TOP_LEVEL = {".ci", ".gitignore", "LICENSE", "README.md", "bench", "bloge", "config",
             "container", "examples", "pyproject.toml", "settings.yaml", "tests"}


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
        "BlogeError", "BlogeUsageError", "CompileError", "ConversationMemory", "Done",
        "DslCompiler", "DslError", "DslExtensionProvider", "DslSyntaxError", "Expression",
        "ExpressionError", "Graph", "JsonCodec", "LlmCalledPayload", "LlmChatOperator",
        "LlmMessage", "LlmProvider", "LlmStreamingChatOperator", "LoopExitedPayload",
        "MaxTurnsExceededError", "Node", "Operator", "OperatorContext", "OperatorInputError",
        "OperatorMetadata", "OperatorRegistry", "ProviderError", "RunError",
        "StreamingAgentLoopOperator", "Token", "Tool", "ToolCall", "ToolCompletedPayload",
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

