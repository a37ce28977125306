"""``OutputSchema``: what an agent must answer with, as a JSON schema and, for a registered
Python type, the type its answers become.

Built from DSL fields (:mod:`.dsl`) or from a pydantic model, a dataclass or a TypedDict
(:meth:`OutputSchema.of`). ``schema`` is the form every provider is sent: strict-ready where
it can be (every object closed, every field listed as required, optional ones nullable), as
OpenAI's ``strict: true`` requires; :meth:`OutputSchema.parse` accepts what that schema allows
and returns the validated value, or the located problems.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bloge.agent.output import validation
from bloge.agent.output.problems import OutputProblem, quoted
from bloge.core.codec import parse_json
from bloge.core.errors import BlogeUsageError
from bloge.llm.structured import OutputMode, OutputRequest

_NAME = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """An agent's result type. ``python_type`` is the registered type answers are made into
    (``None``: answers stay JSON values); ``strict`` is false when the schema has a part that
    OpenAI's strict mode cannot express (an open map), so that it is asked for unstrict."""

    name: str
    schema: Mapping[str, Any] = field(hash=False)
    python_type: Any = None
    strict: bool = True
    max_repairs: int = 2
    """How many times an invalid answer goes back to the model before the run fails with
    ``OutputValidationError`` (each repair is a turn, counted against ``max_turns``)."""
    _adapter: Any = field(default=None, compare=False, repr=False)
    _optional: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.schema, Mapping) or self.schema.get("type") != "object":
            raise BlogeUsageError(f"output schema {self.name!r} must be an object schema "
                                  '({"type": "object", …})')
        repairs: object = self.max_repairs
        if not isinstance(repairs, int) or isinstance(repairs, bool) or repairs < 0:
            raise BlogeUsageError(f"max_repairs must be an integer >= 0, got {repairs!r}")

    @classmethod
    def of(cls, python_type: Any, *, name: str | None = None) -> OutputSchema:
        """The schema of a pydantic model, a dataclass, a TypedDict (or any type pydantic's
        ``TypeAdapter`` takes); its answers become instances of it."""
        from pydantic import (  # noqa: PLC0415 -- pydantic loads when a typed agent is built
            PydanticUndefinedAnnotation,
            PydanticUserError,
            TypeAdapter,
        )

        if isinstance(python_type, OutputSchema):
            return python_type
        try:
            adapter: Any = TypeAdapter(python_type)
            raw = adapter.json_schema()
        except (PydanticUserError, PydanticUndefinedAnnotation) as exc:
            # A typing.TypedDict before Python 3.12, a type not fully defined…: pydantic's
            # message says what to change (its str() adds a link to its docs).
            raise BlogeUsageError(
                f"cannot use {python_type!r} as an output type: {exc.message}") from exc
        except TypeError as exc:
            raise BlogeUsageError(f"cannot use {python_type!r} as an output type: {exc}") from exc
        title = name or getattr(python_type, "__name__", None) or str(raw.get("title", "output"))
        optional: set[str] = set()
        strict_schema, strict = _strict(raw, optional)
        if strict_schema.get("type") != "object":
            raise BlogeUsageError("an output type is an object (a pydantic model, a dataclass, "
                                  f"a TypedDict); {python_type!r} is not")
        return cls(_wire_name(title), strict_schema, python_type, strict, _adapter=adapter,
                   _optional=frozenset(optional))

    @classmethod
    def from_json_schema(cls, name: str, schema: Mapping[str, Any], *,
                         strict: bool = True) -> OutputSchema:
        """A schema given as JSON schema (the DSL's fields, a client's ``response_format``)."""
        return cls(_wire_name(name), dict(schema), None, strict)

    def request(self, mode: OutputMode = "auto") -> OutputRequest:
        """What a model request carries to ask for this schema."""
        return OutputRequest(self.name, self.schema, self.strict, mode)

    def parse(self, text: str) -> tuple[Any, list[OutputProblem]]:
        """``(value, [])`` for an answer that fits (the registered type's instance, else the
        JSON value), else ``(None, problems)``. A fenced JSON block (```json … ```) is read
        as the JSON inside it."""
        try:
            value = parse_json(unfenced(text))
        except ValueError as exc:
            return None, [OutputProblem("$", "a JSON value", f"text that is not JSON ({exc})")]
        return self.validate(value)

    def validate(self, value: Any) -> tuple[Any, list[OutputProblem]]:
        """:meth:`parse` for an already decoded JSON value."""
        if self._adapter is None:
            problems = validation.check(value, self.schema)
            return (None, problems) if problems else (value, [])
        from pydantic import ValidationError  # noqa: PLC0415 -- loaded with the adapter

        try:
            return self._adapter.validate_python(value), []
        except ValidationError as first:
            exc = first
        try:
            # The strict schema lets absent optional fields arrive as null; their defaults
            # may not take one.
            return self._adapter.validate_python(_without_nulls(value, self._optional)), []
        except ValidationError:
            return None, [_problem(e) for e in exc.errors(include_url=False)]

    def dump(self, value: Any) -> Any:
        """``value`` (as :meth:`parse` made it) as JSON data."""
        if self._adapter is None:
            return value
        return self._adapter.dump_python(value, mode="json")


def _problem(error: Any) -> OutputProblem:
    """A pydantic error as a located problem."""
    if error["type"] == "missing":
        return OutputProblem(_path(error["loc"]), "a value (required)", "nothing")
    expected = error["msg"].removeprefix("Input should be ").removeprefix("Value error, ")
    return OutputProblem(_path(error["loc"]), expected, quoted(error.get("input")))


def unfenced(text: str) -> str:
    """The JSON of an answer; models in prompted mode like to wrap it in a fenced block."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped


def _wire_name(name: str) -> str:
    """A schema name every provider accepts (``^[a-zA-Z0-9_-]{1,64}$``)."""
    return (_NAME.sub("_", name).strip("_") or "output")[:64]


def _path(loc: tuple[Any, ...]) -> str:
    path = "$"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _strict(schema: Any, optional: set[str]) -> tuple[Any, bool]:
    """``schema`` made strict-ready: objects closed, optional fields required but nullable
    (``optional`` collects their names, whose nulls may be dropped before validation),
    defaults left out. The flag is false when some part has no strict form (an open map)."""
    if isinstance(schema, list):
        parts = [_strict(item, optional) for item in schema]
        return [p for p, _ in parts], all(ok for _, ok in parts)
    if not isinstance(schema, dict):
        return schema, True
    out: dict[str, Any] = {}
    ok = True
    for key, value in schema.items():
        if key in ("default", "title", "required"):
            continue
        if key in ("$defs", "definitions"):
            made_defs = {name: _strict(sub, optional) for name, sub in value.items()}
            out[key] = {name: made for name, (made, _) in made_defs.items()}
            ok = ok and all(fine for _, fine in made_defs.values())
        elif key == "properties":
            required = set(schema.get("required") or ())
            props: dict[str, Any] = {}
            for name, sub in value.items():
                made, fine = _strict(sub, optional)
                ok = ok and fine
                if name not in required:
                    optional.add(name)
                    made = {"anyOf": [made, {"type": "null"}]}
                props[name] = made
            out["properties"] = props
            out["required"] = list(props)
        elif key == "additionalProperties" and value is not False:
            ok = False
            out[key] = value
        else:
            made, fine = _strict(value, optional)
            ok = ok and fine
            out[key] = made
    if out.get("type") == "object" and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out, ok


def _without_nulls(value: Any, optional: frozenset[str]) -> Any:
    """``value`` without the nulls the strict schema allowed for absent optional fields."""
    if isinstance(value, list):
        return [_without_nulls(item, optional) for item in value]
    if not isinstance(value, dict):
        return value
    return {key: _without_nulls(item, optional) for key, item in value.items()
            if not (item is None and key in optional)}
