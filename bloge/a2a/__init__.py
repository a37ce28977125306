"""A2A (Agent2Agent): bloge's agents as A2A agents, and A2A agents as tools (extra ``[a2a]``).

Built on the protocol's official SDK (``a2a-sdk``, which speaks A2A 1.0 and 0.3). The server
side is :mod:`bloge.server.a2a_api` (``bloge serve``); this package holds what both sides
share — the agent card of an agent (:func:`agent_card`), messages as text
(:mod:`bloge.a2a.parts`) — and the client: :class:`A2aAgentTool`, the operator of a DSL tool
``tool quote : a2a "<url>" { … }``.
"""

from __future__ import annotations

try:
    import a2a.types  # noqa: F401 -- checks that the extra is installed
except ImportError as exc:  # pragma: no cover -- depends on the installed extras
    from bloge.core.errors import BlogeUsageError

    raise BlogeUsageError("A2A needs the protocol's SDK: pip install 'bloge[a2a]'") from exc

from bloge.a2a.cards import agent_card
from bloge.a2a.remote import A2aAgentTool, RemoteAgentError

__all__ = ["A2aAgentTool", "RemoteAgentError", "agent_card"]
