"""Request bodies: parsed, validated, and their problems told back as 400s naming the field."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError
from starlette.requests import Request

from bloge.agent import Budget
from bloge.core.errors import BlogeUsageError
from bloge.llm import LlmMessage

M = TypeVar("M", bound=BaseModel)


class BadRequestError(Exception):
    """The request cannot be used; ``param`` names the field at fault."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


#: JSON types as they are: ``true`` is not the number 1, nor ``"3"`` a number (pydantic's lax
#: mode would take both).
STRICT_BODY = ConfigDict(extra="forbid", strict=True)


class RunBody(BaseModel):
    """``POST /agents/{id}/runs``."""

    model_config = STRICT_BODY

    input: str | list[dict[str, Any]]
    thread_id: str | None = Field(default=None, min_length=1, max_length=200)
    max_turns: int | None = Field(default=None, ge=1, le=10_000)
    stream: bool = False
    on_disconnect: Literal["cancel", "continue"] | None = None

    @field_validator("input", mode="before")
    @classmethod
    def _text_or_messages(cls, value: object) -> object:
        if isinstance(value, str):
            if not value.strip():  # as POST /chat and the MCP tools refuse it
                raise PydanticCustomError("blank_input",
                                          "the text is blank: send the user's message")
            return value
        if isinstance(value, list) and all(isinstance(item, dict) for item in value):
            messages = [_sendable(item, f"input[{index}]") for index, item in enumerate(value)]
            unpaired = unanswered(messages)
            if unpaired is not None:
                index, why = unpaired
                raise PydanticCustomError("agent_message", "{problem}",
                                          {"problem": why, "param": f"input[{index}]"})
            return value
        # pydantic would name only the union's first member ("should be a valid string").
        raise PydanticCustomError(
            "agent_input", 'should be a string or a list of messages such as '
                           '[{"role": "user", "content": "…"}], got {got}',
            {"got": _json_kind(value)})


    @field_validator("thread_id")
    @classmethod
    def _printable_thread_id(cls, value: str | None) -> str | None:
        why = None if value is None else _unprintable(value)
        if why is not None:
            raise PydanticCustomError("control_character", "{problem}", {"problem": why})
        return value


def _sendable(message: dict[str, Any], where: str) -> LlmMessage:
    """``message``, refused when it is not one a model can be sent, naming it ``where``."""
    try:
        return LlmMessage.from_dict(message)  # the one reader of a message's dict form
    except ValueError as exc:
        # ``param`` is read by json_body: the item, where pydantic's place would be the field.
        raise PydanticCustomError("agent_message", "{problem}",
                                  {"problem": str(exc), "param": where}) from None


def unanswered(messages: Sequence[LlmMessage]) -> tuple[int, str] | None:
    """The index of the first message that breaks the pairing every provider requires, and
    what is wrong: a tool message must answer a call of the assistant message just before
    it (or of that message's other answers), and each of an assistant message's tool calls
    needs its tool message, before any other message and before the end."""
    waiting: dict[str, int] = {}  # call id → the index of the assistant message that made it
    for index, message in enumerate(messages):
        if message.role == "tool":
            if waiting.pop(message.tool_call_id or "", None) is None:
                return index, (f"this tool message answers tool call {message.tool_call_id!r}, "
                               "which the assistant message before it did not make (or which "
                               "another tool message answered already)")
            continue
        if waiting:
            break
        if message.role == "assistant":
            waiting = {call.id: index for call in message.tool_calls}
    if not waiting:
        return None
    call_id, index = next(iter(waiting.items()))
    return index, (f"this assistant message's tool call {call_id!r} has no tool message "
                   "answering it: send one after it (role tool, that tool_call_id), or leave "
                   "the call out")


#: Characters no id may hold: PostgreSQL refuses NUL in text, and a log line should not
#: be split or coloured by an id.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def printable_id(value: str, name: str) -> str:
    """``value``, a run or thread id given as ``name``; :class:`BadRequestError` when it holds
    a control character (NUL, a line break, …)."""
    why = _unprintable(value)
    if why is not None:
        raise BadRequestError(f"{name}: {why}", param=name)
    return value


def _unprintable(value: str) -> str | None:
    found = _CONTROL.search(value)
    if found is None:
        return None
    return f"an id may not hold a control character; {value!r} holds U+{ord(found[0]):04X}"


def _json_kind(value: object) -> str:
    """What JSON calls ``value``'s type ("a number", "a list holding a number")."""
    if isinstance(value, list):
        odd = next(item for item in value if not isinstance(item, dict))
        return f"a list holding {_json_kind(odd)}"
    return _JSON_KINDS.get(type(value), type(value).__name__)


_JSON_KINDS = {str: "a string", bool: "a boolean", int: "a number", float: "a number",
               dict: "an object", type(None): "null"}


class ResumeBody(BaseModel):
    """``POST /runs/{id}/resume``."""

    model_config = STRICT_BODY

    max_turns: int | None = Field(default=None, ge=1, le=10_000)
    budget: dict[str, Any] | None = None
    """Raised budget limits: ``{"usd": 1.0, "thread": {"tokens": 80000}}``."""
    stream: bool = False
    on_disconnect: Literal["cancel", "continue"] | None = None

    @field_validator("budget")
    @classmethod
    def _budget(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return checked_budget(value)


def checked_budget(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """``value`` when it is a budget's limits (a run's, and a thread's under ``"thread"``);
    else a ``ValueError`` naming the limit."""
    if value is None:
        return None
    thread = value.get("thread", {})
    try:
        Budget.of({k: v for k, v in value.items() if k != "thread"})
        Budget.of(thread if isinstance(thread, dict) else {"thread": thread})
    except BlogeUsageError as exc:
        raise ValueError(str(exc)) from None
    return value


async def json_body(request: Request, model: type[M], *, empty_ok: bool = False) -> M:
    """The request's JSON body as ``model``; :class:`BadRequestError` naming what is wrong."""
    raw = await request.body()
    if not raw.strip() and empty_ok:
        raw = b"{}"
    try:
        return model.model_validate_json(raw)  # parsed and checked in one pass
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            _not_json(raw, first.get("ctx", {}).get("error"))
        # The field (or the part a validator named); pydantic's further steps name union
        # members and list items.
        where = first.get("ctx", {}).get("param") or (
            str(first["loc"][0]) if first["loc"] else None)
        raise BadRequestError(f"{where or 'the body'}: {first['msg']}", param=where) from None


#: How deep pydantic's JSON parser (jiter) nests arrays and objects before it gives up.
JSON_DEPTH = 200
_TOO_DEEP = (f"the request body nests arrays and objects more than {JSON_DEPTH} levels deep, "
             "deeper than the server reads")


def _not_json(raw: bytes, reason: str | None) -> None:
    """Why ``raw`` is not JSON, with its line and column (what pydantic's error lacks);
    ``reason`` (pydantic's) when Python's parser takes it (a lone surrogate ``\\ud800``)."""
    if reason is not None and "recursion limit" in reason:
        raise BadRequestError(_TOO_DEEP)
    try:
        # Decoded here: json.loads would read a body that starts like UTF-16 as UTF-16.
        json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadRequestError("the request body is not UTF-8 text") from None
    except RecursionError:
        raise BadRequestError(_TOO_DEEP) from None
    except json.JSONDecodeError as exc:
        raise BadRequestError(f"the request body is not JSON: {exc.msg} at line {exc.lineno}, "
                              f"column {exc.colno}") from None
    raise BadRequestError(f"the request body is not JSON: {reason}" if reason
                          else "the request body is not JSON")


async def text_body(request: Request) -> str:
    """The raw body as text, falling back to the ``q`` query parameter (the chapter's
    controller)."""
    raw = await request.body()
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise BadRequestError("the request body is not UTF-8 text") from None
    text = text or request.query_params.get("q", "").strip()
    if not text:
        raise BadRequestError("no input: send it as the request body, or as ?q=", param="q")
    return text
