"""The journal's chain compiled for JSON-lines sinks: one function renders a whole batch.

A channel whose processors are at most one :class:`~bloge.journal.redaction.Redactor`,
writing to a sink whose renderer is :class:`~bloge.journal.sinks.JsonLines` — the agent
bridge on a file or on stdout — renders its events here instead of through structlog. The
result is the same, byte for byte: the same timestamps and sequence numbers, the fields of
the records in the same order, and the redactor runs whenever it could change something.
What is saved is the per-event cost of structlog's dispatch, of reading record fields by
name, and of a redaction pass over events that hold nothing to redact, which is most of them:

- the event dict is built by a function generated once per combination of record types
  (as ``dataclasses`` generates ``__init__``): one attribute load per field;
- the redactor's quick check (:meth:`Redactor.finds_nothing_but_secrets`) covers keys,
  nested values and the text and JSON fields; what depends on the keys alone is decided
  once per combination of record types too (:meth:`Redactor.check_for`);
- secret values are looked for in the encoded line, as their JSON-escaped forms: JSON
  escapes one character at a time, so a string holding a secret encodes to text holding
  the secret's escaped form — the secret itself, for the usual API key. Only a line that
  contains one goes through the redactor.
"""

from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Callable, Iterable
from typing import Any

from structlog.typing import EventDict

from bloge.journal.chain import IsoTimestamps, SequenceNumbers
from bloge.journal.redaction import Check, Redactor
from bloge.journal.sinks import JsonLines

#: A captured event: (channel, time, name, records, fields); renderers ignore the channel.
Captured = tuple[Any, float, str, tuple[object, ...], dict[str, Any]]
#: Called with the name of an event that could not be rendered, and the error.
OnFailure = Callable[[str, Exception], None]
#: Builds ``{"event": …, "timestamp": …, <the fields of each record>…}``.
Builder = Callable[[str, str, tuple[object, ...]], dict[str, Any]]
#: How events of one combination of record types are built and checked for redaction.
Shape = tuple[Builder, Check]


def compile_chain(stamps: IsoTimestamps, sequence: SequenceNumbers,
                  processors: tuple[Any, ...], renderer: object) -> CompiledJsonChain | None:
    """The chain ``stamps`` → records → ``sequence`` → ``processors`` → ``renderer``
    compiled, or ``None`` when it cannot be: ``processors`` must be at most one
    :class:`Redactor` and ``renderer`` a :class:`JsonLines`."""
    if type(renderer) is not JsonLines or len(processors) > 1:
        return None
    if not processors:
        return CompiledJsonChain(stamps, sequence, None, renderer)
    redactor = processors[0]
    if type(redactor) is not Redactor:
        return None
    return CompiledJsonChain(stamps, sequence, redactor, renderer)


class CompiledJsonChain:
    """Renders captured events to JSON lines (see the module docs)."""

    __slots__ = ("_always_redact", "_encode", "_markers", "_redactor", "_sequence", "_shapes",
                 "_stamps")

    def __init__(self, stamps: IsoTimestamps, sequence: SequenceNumbers,
                 redactor: Redactor | None, renderer: JsonLines) -> None:
        self._stamps = stamps
        self._sequence = sequence
        self._redactor = redactor
        self._encode = renderer.encode
        self._shapes: dict[tuple[type, ...], Shape] = {}
        secrets = redactor.secrets if redactor is not None else ()
        markers: tuple[Any, ...] = tuple(
            secret if renderer.ascii_only else secret.encode("utf-8", "surrogatepass")
            for secret in secrets)
        # A secret that JSON escapes (quotes, control or non-ASCII characters on an ASCII
        # sink) is not looked for in the line: the redactor runs on every event instead.
        self._always_redact = markers != tuple(renderer.encode(secret)[1:-1]
                                               for secret in secrets)
        self._markers = markers

    def render(self, captured: Iterable[Captured], out: list[Any], failed: OnFailure) -> None:
        """Appends the line of each event to ``out``; an event that cannot be rendered is
        passed to ``failed`` and skipped."""
        shapes = self._shapes
        stamp = self._stamps.format
        number = self._sequence.next
        encode = self._encode
        redactor = self._redactor
        # Events with extra fields may have any keys: the redactor checks them in full.
        general = redactor.finds_nothing_but_secrets if redactor is not None else _clean
        markers = self._markers
        always = self._always_redact
        append = out.append
        for _, at, event, records, fields in captured:
            try:
                kinds = tuple(map(type, records))
                build, clean = shapes.get(kinds) or self._shape(kinds)
                event_dict = build(event, stamp(at), records)
                if fields:
                    event_dict.update(fields)
                    clean = general
                execution_id = event_dict.get("execution_id")
                if execution_id is not None:
                    event_dict["seq"] = number(execution_id)
                if redactor is None:
                    append(encode(event_dict))
                elif always or not clean(event_dict):
                    append(encode(redactor(None, "msg", event_dict)))
                else:
                    line = encode(event_dict)
                    if markers and any(marker in line for marker in markers):
                        line = encode(redactor(None, "msg", event_dict))
                    append(line)
            except Exception as exc:  # a value or key we do not control
                failed(event, exc)

    def _shape(self, kinds: tuple[type, ...]) -> Shape:
        keys = ["event", "timestamp", *(field.name for kind in kinds
                                        for field in dataclasses.fields(kind)), "seq"]
        redactor = self._redactor
        clean = redactor.check_for(keys) if redactor is not None else _clean
        shape = self._shapes[kinds] = (event_dict_builder(kinds), clean)
        return shape


def _clean(event_dict: EventDict) -> bool:
    """The check of a chain without a redactor: there is nothing to redact."""
    return True


def event_dict_builder(kinds: tuple[type, ...]) -> Builder:
    """The function building the event dict of records of these dataclass types: ``event``,
    ``timestamp``, then every field of each record in declaration order (a field repeated
    by a later record keeps its place and takes the later value, as in ``merge_records``)."""
    names = [f"r{index}" for index in range(len(kinds))]
    items = ["'event': event", "'timestamp': timestamp"]
    for name, kind in zip(names, kinds, strict=True):
        items += [f"{field.name!r}: {_read(name, field.name)}"
                  for field in dataclasses.fields(kind)]
    unpack = f"    {', '.join(names)}, = records\n" if names else ""
    source = (f"def build(event, timestamp, records):\n{unpack}"
              f"    return {{{', '.join(items)}}}\n")
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # the source holds field names only, as identifiers or literals
    build: Builder = namespace["build"]
    return build


def _read(record: str, field: str) -> str:
    """Source code reading ``field`` of ``record``: an attribute load when the name is an
    identifier (as class bodies make it), ``getattr`` otherwise."""
    if field.isidentifier() and not keyword.iskeyword(field):
        return f"{record}.{field}"
    return f"getattr({record}, {field!r})"
