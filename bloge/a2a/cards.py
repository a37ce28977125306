"""The agent card of a bloge agent: what an A2A client learns of it before asking it."""

from __future__ import annotations

from a2a.types import a2a_pb2 as pb
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_1_0, TransportProtocol

from bloge.agent import AgentDef

#: The scheme name a card gives bloge serve's API keys.
BEARER = "bearer"


def agent_card(definition: AgentDef, url: str, *, keys: bool, version: str) -> pb.AgentCard:
    """The card of the agent ``definition`` served at ``url`` (its JSON-RPC endpoint, for
    A2A 1.0 and 0.3 alike). Its skills are its tools (their descriptions: what the model is
    told of them), or the agent itself when it has none; the system prompt is not shown. With
    ``keys``, the card says that every call needs ``Authorization: Bearer <key>``."""
    described = describe(definition)
    skills = [pb.AgentSkill(id=tool.name, name=tool.name,
                            description=tool.description or f"the tool {tool.name}",
                            tags=["tool"])
              for tool in definition.tools]
    card = pb.AgentCard(
        name=definition.id, description=described, version=version,
        supported_interfaces=[
            pb.AgentInterface(url=url, protocol_binding=TransportProtocol.JSONRPC,
                              protocol_version=protocol)
            for protocol in (PROTOCOL_VERSION_1_0, PROTOCOL_VERSION_0_3)],
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain"],
        skills=skills or [pb.AgentSkill(id=definition.id, name=definition.id,
                                        description=described, tags=["agent"])])
    if keys:
        card.security_schemes[BEARER].http_auth_security_scheme.CopyFrom(
            pb.HTTPAuthSecurityScheme(scheme="Bearer",
                                      description="An API key of the server"))
        requirement = card.security_requirements.add()
        requirement.schemes[BEARER].CopyFrom(pb.StringList())
    return card


def describe(definition: AgentDef) -> str:
    """What a client is told of the agent (the same words as its MCP tool)."""
    tools = ", ".join(tool.name for tool in definition.tools)
    return (f"The bloge agent {definition.id!r} (model {definition.model}"
            + (f"; its tools: {tools}" if tools else "") + "): send it a message, get its "
            "answer.")
