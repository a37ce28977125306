"""A2A messages as text, both ways: what a bloge agent reads of a message, and what a caller
reads of a task or message an agent answered with."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable

from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import MessageToDict


def text_of(parts: Iterable[pb.Part]) -> str:
    """The parts as one text: text parts as they are, data parts as JSON, files by name."""
    chunks: list[str] = []
    for part in parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            chunks.append(part.text)
        elif kind == "data":
            chunks.append(json.dumps(MessageToDict(part.data), ensure_ascii=False))
        elif kind in ("url", "raw"):
            chunks.append(f"[file {part.filename or part.url or 'attached'}]")
    return "\n".join(chunk for chunk in chunks if chunk)


def answer_of(task: pb.Task) -> str:
    """What an agent answered in ``task``: its artifacts' text, else its status message's."""
    artifacts = "\n".join(text_of(artifact.parts) for artifact in task.artifacts)
    return artifacts or text_of(task.status.message.parts)


def message(text: str, *, role: pb.Role = pb.ROLE_USER, context_id: str = "",
            task_id: str = "") -> pb.Message:
    """A message of one text part, with a fresh id."""
    return pb.Message(message_id=uuid.uuid4().hex, role=role, parts=[pb.Part(text=text)],
                      context_id=context_id, task_id=task_id)
