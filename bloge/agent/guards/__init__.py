"""Guards on an agent's input, final answer and tool calls, and the ones bloge ships.

An agent declares them in the DSL (``guard output pii : PiiGuard { action = "reject" }``,
``guard tool_call { when = tool_name == "refund" && tool_args.amount > 500 }``), with
``AgentBuilder.guard(…)`` or ``Agent(…, guards=[…])``; a tripped guard stops the run with
:class:`~bloge.agent.GuardrailTrippedError` or refuses what it checked (see
:mod:`bloge.agent.guards.model`).
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.agent.guards.builtin import BUILTIN_GUARDS as BUILTIN_GUARDS
    from bloge.agent.guards.builtin import MaxLengthGuard as MaxLengthGuard
    from bloge.agent.guards.builtin import PiiGuard as PiiGuard
    from bloge.agent.guards.builtin import ToolArgsSchemaGuard as ToolArgsSchemaGuard
    from bloge.agent.guards.builtin import ToolDenylistGuard as ToolDenylistGuard
    from bloge.agent.guards.model import Guard as Guard
    from bloge.agent.guards.model import GuardCheck as GuardCheck
    from bloge.agent.guards.model import GuardDef as GuardDef
    from bloge.agent.guards.model import GuardVerdict as GuardVerdict
    from bloge.agent.guards.model import input_guard as input_guard
    from bloge.agent.guards.model import output_guard as output_guard
    from bloge.agent.guards.model import tool_call_guard as tool_call_guard
    from bloge.agent.guards.pii import PII_KINDS as PII_KINDS
    from bloge.agent.guards.pii import find_pii as find_pii
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
