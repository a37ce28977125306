"""The offline default model: a deterministic, rule-based ``LlmProvider`` that needs no
network or key and does real work through an agent's tools.

The turn (:mod:`.turn`) reads the latest user message; :mod:`.choice` picks a tool from the
message's words (:mod:`.words`), :mod:`.arguments` fills its arguments (kinds in
:mod:`.parameters`, values from :mod:`.phrases` and :mod:`.sql`), and :mod:`.answer` turns the
tool results into the reply. :mod:`.direct` is what it says when no tool fits.

It knows the protocol (tool definitions, tool messages and their error flag), never an
application: an application adds its own knowledge through the hooks of :mod:`.hooks`,
and may word its answers with the helpers of :mod:`.readable` and :func:`abilities`.
"""

from bloge.llm.offline.arguments import fill_arguments
from bloge.llm.offline.direct import abilities
from bloge.llm.offline.hooks import AnswerFormatter, ArgumentFiller, ToolResult
from bloge.llm.offline.provider import OfflineProvider
from bloge.llm.offline.readable import clip, readable_number, readable_scalar

__all__ = [
    "AnswerFormatter",
    "ArgumentFiller",
    "OfflineProvider",
    "ToolResult",
    "abilities",
    "clip",
    "fill_arguments",
    "readable_number",
    "readable_scalar",
]
