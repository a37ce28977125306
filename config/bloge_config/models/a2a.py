"""``bloge.a2a``: A2A (Agent2Agent) — bloge serve's agents as A2A agents, and the remote agents
the agents' ``tool x : a2a "<url>"`` tools ask."""

from __future__ import annotations

from typing import Annotated

from pydantic import ByteSize, Field

from bloge_config.fields import Secret, ServiceUrl
from bloge_config.models.section import SECTION, MaskedSection, ResponseBytes

RemoteName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$")]


class A2aRemoteSettings(MaskedSection):
    """``bloge.a2a.remotes.<name>``: how to reach the remote agents at ``url``: every a2a tool
    whose URL is ``url`` or starts with it (``url`` then ends with ``/``) sends ``api-key``
    and ``headers`` (the longest matching ``url`` wins)."""

    model_config = SECTION

    url: ServiceUrl = Field(description="The agent's URL as the DSL writes it, or a prefix "
                            "of several agents' URLs ending with /")
    api_key: Secret | None = Field(default=None, description="Sent as Authorization: Bearer; "
                                   "a secret, never shown")
    headers: dict[str, Secret] = Field(default_factory=dict, description="More HTTP headers "
                                       "sent with each call; secrets, never shown")
    max_attempts: int = Field(default=3, ge=1, le=10, description="Tries of a call to an "
                              "idempotent agent (idempotent = true in its tool) that may pass")
    max_answer_bytes: ResponseBytes = Field(default=ByteSize(1024 * 1024), description=(
        "Largest answer read from the agent (its card too), in bytes; a larger one fails the "
        "call as it arrives"))


class A2aSettings(MaskedSection):
    """A2A, the Agent2Agent protocol (extra ``[a2a]``): bloge serve's agents as A2A agents,
    and how the agents' ``tool x : a2a "<url>"`` tools reach the remote agents they ask."""

    model_config = SECTION

    serve: bool = Field(default=True, description="bloge serve publishes each agent's card "
                        "and takes A2A tasks at /agents/{id} (with the extra installed)")
    remotes: dict[RemoteName, A2aRemoteSettings] = Field(
        default_factory=dict, description="Keys and headers for remote agents, by a name of "
        "yours")
