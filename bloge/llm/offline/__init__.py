"""The offline default model: a deterministic, rule-based ``LlmProvider`` that needs no
network or key and does real work through an agent's tools.

The turn (:mod:`.turn`) reads the latest user message; :mod:`.choice` picks a tool from the
message's words (:mod:`.words`), :mod:`.arguments` fills its arguments (kinds in
:mod:`.parameters`, values from :mod:`.phrases` and :mod:`.sql`), and :mod:`.answer` turns the
tool results into the reply. :mod:`.direct` is what it says when no tool fits.
"""

from bloge.llm.offline.provider import OfflineProvider

__all__ = ["OfflineProvider"]
