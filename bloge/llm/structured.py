"""Structured output on the provider SPI: how a request asks for a typed answer, per mode.

A request's :class:`OutputRequest` names the answer's JSON schema; each provider asks for it
the strongest way it has, or the way its ``output_mode`` forces:

``native``
    the provider's own structured output (OpenAI-compatible ``response_format`` of type
    ``json_schema``, with ``strict``); the answer's text is the JSON.
``tool``
    a final-answer tool (:data:`OUTPUT_TOOL`) whose parameters are the schema, which the model
    must call when it is done (with other tools, it must call some tool each turn); the call's
    arguments become the answer's text and the call is not run. Anthropic's way.
``prompted``
    a system message with the schema, asking for JSON only; any model can do it, none is held
    to it.

:func:`prepared` turns a request into the one a provider sends, :func:`answered` the
provider's answer back into a neutral one. Both are pure.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias, get_args

from bloge.core.errors import BlogeUsageError
from bloge.llm.messages import LlmMessage
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse, ToolDefinition

OutputMode: TypeAlias = Literal["auto", "native", "tool", "prompted"]
OUTPUT_MODES: tuple[str, ...] = get_args(OutputMode)

#: The final-answer tool of ``tool`` mode.
OUTPUT_TOOL = "final_result"

_TOOL_DESCRIPTION = ("Give your final answer by calling this tool; its arguments are the "
                     "answer. Call it once, when you are done.")


@dataclass(frozen=True, slots=True)
class OutputRequest:
    """The typed answer a request asks for: a name (``^[A-Za-z0-9_-]{1,64}$``), an object
    JSON ``schema``, whether it is ``strict`` (every object closed, every field required), and
    the ``mode`` that must be used (``"auto"``: the provider's strongest)."""

    name: str
    schema: Mapping[str, Any]
    strict: bool = True
    mode: OutputMode = "auto"

    def __post_init__(self) -> None:
        if self.mode not in OUTPUT_MODES:
            raise BlogeUsageError(f"output mode must be one of {', '.join(OUTPUT_MODES)}, "
                                  f"got {self.mode!r}")


def resolved_mode(request: LlmRequest, default: OutputMode, strongest: OutputMode) -> OutputMode:
    """The mode a provider whose strongest is ``strongest`` and whose setting is ``default``
    uses: the request's own mode first, then the setting, then the strongest."""
    output = request.output
    mode = output.mode if output is not None and output.mode != "auto" else default
    return strongest if mode == "auto" else mode


def prepared(request: LlmRequest, mode: OutputMode) -> LlmRequest:
    """``request`` as sent in ``mode``: ``native`` sets ``response_format``, ``tool`` adds the
    final-answer tool (forced when it is the only one, else some tool is required), ``prompted``
    adds a system message with the schema. Without an output request, ``request`` itself."""
    output = request.output
    if output is None:
        return request
    match mode:
        case "native" | "auto":
            return replace(request, response_format=response_format(output))
        case "tool":
            others = () if request.tool_choice == "none" else request.tools
            tool = ToolDefinition(OUTPUT_TOOL, _TOOL_DESCRIPTION, dict(output.schema))
            if not others:
                choice: str | None = OUTPUT_TOOL
            elif request.tool_choice in (None, "auto"):
                choice = "required"
            else:
                choice = request.tool_choice
            return replace(request, tools=(*others, tool), tool_choice=choice)
        case "prompted":
            return replace(request, messages=(*request.messages, LlmMessage.system(
                prompt_for(output))))


def response_format(output: OutputRequest) -> dict[str, Any]:
    """OpenAI's ``response_format`` for ``output``."""
    return {"type": "json_schema", "json_schema": {
        "name": output.name, "schema": dict(output.schema), "strict": output.strict}}


def prompt_for(output: OutputRequest) -> str:
    """The instruction of ``prompted`` mode."""
    return ("Answer with only a JSON value (no prose, no code fence) that matches this JSON "
            "schema:\n" + json.dumps(dict(output.schema), ensure_ascii=False))


def answered(response: LlmResponse, mode: OutputMode) -> LlmResponse:
    """The neutral answer to a request sent in ``mode``: in ``tool`` mode, a call of the
    final-answer tool becomes the answer's text (other calls of the same answer are dropped:
    the final answer ends the run)."""
    if mode != "tool":
        return response
    final = next((c for c in response.tool_calls if c.name == OUTPUT_TOOL), None)
    if final is None:
        return response
    return replace(response, content=final.arguments, tool_calls=(), finish_reason="stop")


async def answered_stream(chunks: AsyncGenerator[LlmChunk, None]
                          ) -> AsyncGenerator[LlmChunk, None]:
    """:func:`answered` for a ``tool``-mode stream: the final-answer call's chunk becomes its
    text, later calls of the same answer are dropped, and the ``done`` chunk says ``stop``."""
    final = False
    async with aclosing(chunks):
        async for chunk in chunks:
            call = chunk.tool_call
            if call is not None and call.name == OUTPUT_TOOL and not final:
                final = True
                yield replace(chunk, content=call.arguments, tool_call=None)
            elif call is not None and final:
                continue
            elif chunk.done and final:
                yield replace(chunk, finish_reason="stop")
            else:
                yield chunk
