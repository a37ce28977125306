"""A Chat Completions request's own tools, read and checked: ``tools`` (function tools, their
JSON-schema parameters, ``strict`` schemas as OpenAI defines them), ``tool_choice`` and
``parallel_tool_calls``.

The client runs these tools: the agent's run offers them to the model beside the agent's own,
and when the model calls one the completion ends with ``finish_reason: "tool_calls"`` and
the run waits for the client's results (:mod:`bloge.server.openai_api`). Everything here is
a pure translation; each problem is a :class:`~bloge.server.inputs.BadRequestError` naming
the field at fault as OpenAI's errors do (``tools[1].function.name``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bloge.llm import LlmMessage, ToolCall, ToolDefinition
from bloge.server.inputs import BadRequestError

#: What OpenAI takes as a function's name.
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: How many tools OpenAI takes in one request.
MAX_TOOLS = 128
#: The ``tool_choice`` modes; anything else is a function the request names.
MODES = ("none", "auto", "required")
#: The keywords under which a JSON schema holds further schemas (one, a list, or a mapping).
_ONE = ("items", "additionalProperties", "not", "contains", "if", "then", "else")
_MANY = ("anyOf", "allOf", "oneOf", "prefixItems")
_NAMED = ("properties", "$defs", "definitions", "patternProperties")


@dataclass(frozen=True, slots=True)
class ClientTools:
    """The tools a request brings for its run, which its client runs, and how the model may
    call tools.

    ``choice`` is ``"none"``, ``"auto"``, ``"required"`` or the name of one of ``tools``
    (``None``: the request did not say). ``parallel`` is ``parallel_tool_calls`` (``None``:
    not said, the provider's default). ``strict`` names the tools whose arguments must match
    their schema exactly (their schemas are checked for it here)."""

    tools: tuple[ToolDefinition, ...] = ()
    choice: str | None = None
    parallel: bool | None = None
    strict: frozenset[str] = frozenset()

    def names(self) -> frozenset[str]:
        return frozenset(tool.name for tool in self.tools)

    @property
    def offered(self) -> tuple[ToolDefinition, ...]:
        """The tools the model is offered: none with ``tool_choice: "none"`` (the agent's own
        tools still run on the server as the agent says)."""
        return () if self.choice == "none" else self.tools


def client_tools(tools: Sequence[object] | None, *, tool_choice: object = None,
                 parallel_tool_calls: bool | None = None) -> ClientTools:
    """The request's ``tools``, ``tool_choice`` and ``parallel_tool_calls``, checked."""
    defined = tuple(_tool(tool, f"tools[{index}]") for index, tool in enumerate(tools or ()))
    if len(defined) > MAX_TOOLS:
        raise _bad("tools", f"at most {MAX_TOOLS} tools, got {len(defined)}")
    seen: dict[str, int] = {}
    for index, (tool, _) in enumerate(defined):
        where = f"tools[{index}].function.name"
        if tool.name in seen:
            raise _bad(where, f"two tools are named {tool.name!r} "
                              f"(tools[{seen[tool.name]}] and tools[{index}])")
        seen[tool.name] = index
    names = tuple(seen)
    return ClientTools(tuple(tool for tool, _ in defined), _choice(tool_choice, names),
                       parallel_tool_calls,
                       frozenset(tool.name for tool, strict in defined if strict))


def check_own_names(tools: ClientTools, own: Sequence[str]) -> None:
    """A client's tool may not take the name of one of the agent's own tools (``own``),
    which run on the server: the model could not tell them apart."""
    for index, tool in enumerate(tools.tools):
        if tool.name in own:
            raise _bad(f"tools[{index}].function.name",
                       f"the agent has a tool named {tool.name!r} of its own, which runs on "
                       "the server: give the client's tool another name")


def _tool(tool: object, where: str) -> tuple[ToolDefinition, bool]:
    if not isinstance(tool, Mapping):
        raise _bad(where, 'a tool must be {"type": "function", "function": {"name": …, '
                          '"description": …, "parameters": {…}}}')
    if tool.get("type") != "function":
        raise _bad(f"{where}.type", f'only function tools are supported ("type": "function"), '
                                    f"got {tool.get('type')!r}")
    function = tool.get("function")
    if not isinstance(function, Mapping):
        raise _bad(f"{where}.function", 'a function tool needs its "function": {"name": …, '
                                        '"description": …, "parameters": {…}}')
    name = function.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise _bad(f"{where}.function.name", "a function's name is 1 to 64 letters, digits, "
                                             f"underscores or dashes, got {name!r}")
    description = function.get("description", "")
    if not isinstance(description, str):
        raise _bad(f"{where}.function.description", "the description must be a string")
    strict = function.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise _bad(f"{where}.function.strict", "strict must be true or false")
    parameters = function.get("parameters")
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    _check_parameters(parameters, f"{where}.function.parameters", strict=bool(strict))
    return ToolDefinition(name, description, parameters), bool(strict)


def _check_parameters(schema: object, where: str, *, strict: bool) -> None:
    """``schema`` is a JSON schema of an object (as OpenAI requires of ``parameters``); with
    ``strict``, every object in it lists all its properties as required and allows no
    others, as OpenAI's structured outputs require."""
    if not isinstance(schema, Mapping):
        raise _bad(where, "the parameters must be a JSON schema (an object)")
    if schema.get("type", "object") != "object":
        raise _bad(f"{where}.type", 'the parameters must be the schema of an object '
                                    f'("type": "object"), got {schema.get("type")!r}')
    _check_schema(schema, where, strict=strict)


def _check_schema(schema: Mapping[str, Any], where: str, *, strict: bool) -> None:
    properties = schema.get("properties")
    if properties is not None and not isinstance(properties, Mapping):
        raise _bad(f"{where}.properties", "properties must be an object of schemas")
    required = schema.get("required")
    if required is not None and not (isinstance(required, list)
                                     and all(isinstance(item, str) for item in required)):
        raise _bad(f"{where}.required", "required must be a list of property names")
    if strict and _is_object(schema):
        if schema.get("additionalProperties") is not False:
            raise _bad(f"{where}.additionalProperties", 'a strict schema says '
                       '"additionalProperties": false for every object')
        missing = [name for name in (properties or {}) if name not in (required or ())]
        if missing:
            raise _bad(f"{where}.required", "a strict schema lists every property as "
                       f"required (make an optional one nullable); missing: {', '.join(missing)}")
    for key, nested in _nested(schema):
        if not isinstance(nested, Mapping):
            if isinstance(nested, bool):  # true / false are schemas too
                continue
            raise _bad(f"{where}.{key}", "must be a JSON schema (an object)")
        _check_schema(nested, f"{where}.{key}", strict=strict)


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def _nested(schema: Mapping[str, Any]) -> list[tuple[str, object]]:
    """The schemas ``schema`` holds, each with its place in it."""
    found: list[tuple[str, object]] = []
    for key in _ONE:
        value = schema.get(key)
        if isinstance(value, Mapping):
            found.append((key, value))
    for key in _MANY:
        value = schema.get(key)
        if isinstance(value, list):
            found.extend((f"{key}[{index}]", item) for index, item in enumerate(value))
    for key in _NAMED:
        value = schema.get(key)
        if isinstance(value, Mapping):
            found.extend((f"{key}.{name}", item) for name, item in value.items())
    return found


def _choice(choice: object, names: Sequence[str]) -> str | None:
    """``tool_choice`` as a mode or a tool's name."""
    if choice is None:
        return None
    if isinstance(choice, str):
        if choice not in MODES:
            raise _bad("tool_choice", f'tool_choice is "none", "auto", "required" or '
                                      f'{{"type": "function", "function": {{"name": …}}}}, '
                                      f"got {choice!r}")
        if choice == "required" and not names:
            raise _bad("tool_choice", 'tool_choice "required" needs tools: send them in '
                                      '"tools" (the agent\'s own are its to choose)')
        return choice
    function = choice.get("function") if isinstance(choice, Mapping) else None
    if not (isinstance(choice, Mapping) and choice.get("type") == "function"
            and isinstance(function, Mapping) and isinstance(function.get("name"), str)):
        raise _bad("tool_choice", 'a named tool_choice is {"type": "function", "function": '
                                  '{"name": …}}')
    name = function["name"]
    if name not in names:
        known = ", ".join(names) or "none"
        raise _bad("tool_choice.function.name", f"tool_choice names {name!r}, which is not "
                                                f"one of the request's tools ({known})")
    return str(name)


def _bad(param: str, message: str) -> BadRequestError:
    return BadRequestError(f"{param}: {message}", param=param)


@dataclass(frozen=True, slots=True)
class ToolReplies:
    """The results a client sends back: the tool messages that end a request's messages
    (after the assistant message whose calls they answer), by call id in their order."""

    results: Mapping[str, str]
    first: int
    """The index of the first of them among the request's messages."""
    calls: tuple[ToolCall, ...]
    """The calls they answer, as the assistant message before them shows them."""
    started: tuple[LlmMessage, ...]
    """The messages the run they continue started with: those before that assistant
    message, without the rounds of calls and results they end with (a run's input never
    ends with a tool message: such a request continues a run)."""

    def call_ids(self) -> tuple[str, ...]:
        return tuple(self.results)


def tool_replies(messages: Sequence[LlmMessage]) -> ToolReplies | None:
    """The tool results ``messages`` end with; ``None`` when they end otherwise (a new
    question: a new run). Each tool message answers a call of the assistant message before
    it (:func:`~bloge.server.inputs.unanswered` checked that)."""
    first = _results_start(messages, len(messages))
    if first == len(messages):
        return None
    start = first - 1  # the assistant message whose calls they answer
    while start and messages[start - 1].role == "tool":  # an earlier round of the run's
        start = _results_start(messages, start) - 1
    return ToolReplies({m.tool_call_id or "": m.content for m in messages[first:]}, first,
                       messages[first - 1].tool_calls, tuple(messages[:start]))


def _results_start(messages: Sequence[LlmMessage], end: int) -> int:
    """Where the tool messages that end ``messages[:end]`` begin (``end``: none)."""
    while end and messages[end - 1].role == "tool":
        end -= 1
    return end
