"""``ServedAgents``: the agents a server serves, as operators made on demand."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from bloge.agent import (
    Agent,
    AgentBuilder,
    AgentDef,
    AgentExecutionListener,
    AgentLoopOperator,
    StreamingAgentLoopOperator,
    agent_operator,
    with_budget_limits,
)
from bloge.core.errors import BlogeUsageError
from bloge.core.suggest import did_you_mean_hint
from bloge.store import Store

AgentOperator = AgentLoopOperator | StreamingAgentLoopOperator
Build = Callable[[AgentDef], AgentOperator]


def _given(definition: AgentDef, *, max_turns: int | None,
           sampling: Mapping[str, Any] | None, budget: Mapping[str, Any] | None) -> AgentDef:
    """``definition`` with what a request gave its run in place of the agent's own: its
    ``budget`` limits raised (see :func:`~bloge.agent.with_budget_limits`), its ``sampling``
    (``temperature``, ``max_tokens``, ``stop``, ``seed``; checked as the DSL checks them:
    ``replace()`` validates the definition), its ``max_turns``."""
    if budget:
        definition = with_budget_limits(definition, budget)
    if sampling:
        definition = replace(definition, **sampling)
    if max_turns is not None:
        definition = AgentBuilder.from_def(definition).max_turns(max_turns).build()
    return definition


class UnknownAgentError(LookupError):
    """No agent has the id asked for; the message lists the closest ones."""

    def __init__(self, agent_id: str, known: list[str]) -> None:
        hint = did_you_mean_hint(agent_id, known)
        super().__init__(f"no agent {agent_id!r}{hint} (agents: {', '.join(known) or 'none'})")


class NoDefaultAgentError(UnknownAgentError):
    """Several agents, and none named the default."""

    def __init__(self, known: list[str]) -> None:
        LookupError.__init__(self, "there is no default agent: set bloge.server.default-agent "
                             f"(agents: {', '.join(known) or 'none'}), or ask one by its id")


class ServedAgents:
    """Agents by id. ``build`` makes the operator of a definition (with the application's
    registry, listeners and store); each agent is served plain or streaming, and with another
    ``max_turns`` when a request asks."""

    __slots__ = ("_build", "_made", "default", "definitions")

    def __init__(self, definitions: Mapping[str, AgentDef], build: Build, *,
                 default: str | None = None) -> None:
        self.definitions = dict(definitions)
        if default is not None and default not in self.definitions:
            raise UnknownAgentError(default, sorted(self.definitions))
        self.default = default
        self._build = build
        self._made: dict[tuple[str, bool], AgentOperator] = {}

    @classmethod
    def of(cls, agents: Sequence[Agent], *, store: Store,
           listeners: Sequence[AgentExecutionListener] = ()) -> ServedAgents:
        """``agents`` served by their names, the first one the default: each runs with its
        model, tools and listeners (then ``listeners``), recorded in ``store`` (not in its
        own store, if it has one)."""
        if not agents:
            raise BlogeUsageError("create_app(agents=[...]) needs at least one Agent")
        made: dict[str, Agent] = {}
        for agent in agents:
            if not isinstance(agent, Agent):
                raise BlogeUsageError(f"create_app(agents=[...]) takes bloge.Agent objects, "
                                      f"got {type(agent).__name__}")
            name = agent.operator.agent_def.id
            if name in made:
                raise BlogeUsageError(f"two agents are named {name!r}: give each Agent its own "
                                      "name= to serve them together")
            made[name] = agent

        def build(definition: AgentDef) -> AgentOperator:
            served = made[definition.id].operator
            operator = agent_operator(definition.id, definition, served.registry,
                                      listeners=(*served.listeners, *listeners), store=store,
                                      budgets=served.budgets)
            operator.engine.link(served.engine.linked)  # the agents it hands over to
            return operator

        return cls({name: agent.operator.agent_def for name, agent in made.items()}, build,
                   default=next(iter(made)))

    def ids(self) -> list[str]:
        return sorted(self.definitions)

    def definition(self, agent_id: str) -> AgentDef:
        try:
            return self.definitions[agent_id]
        except KeyError:
            raise UnknownAgentError(agent_id, self.ids()) from None

    def default_id(self) -> str:
        """``default``, or the only agent; ``UnknownAgentError`` otherwise."""
        if self.default is not None:
            return self.default
        if len(self.definitions) == 1:
            return next(iter(self.definitions))
        raise NoDefaultAgentError(self.ids())

    def retune(self, agent_id: str, **changes: Any) -> None:
        """Change the agent's ``max_turns``, ``max_tool_concurrency`` or ``temperature`` for
        the runs that follow (see ``AgentLoopOperator.retune``); a request's own
        ``max_turns`` still wins."""
        definition = self.definition(agent_id)
        for (made_id, _), made in self._made.items():
            if made_id == agent_id:
                made.retune(**changes)
        self.definitions[agent_id] = replace(definition, **changes)

    def whole(self, agent_id: str, *, max_turns: int | None = None,
              sampling: Mapping[str, Any] | None = None,
              budget: Mapping[str, Any] | None = None) -> AgentLoopOperator:
        """The agent's operator answering whole, with its own or another turn cap, and with
        ``sampling`` (``temperature``, ``max_tokens``, ``stop``, ``seed``) in place of the
        agent's own when given, and with the ``budget`` limits raised (see
        :func:`~bloge.agent.with_budget_limits`)."""
        made = self._operator(agent_id, streaming=False, max_turns=max_turns,
                              sampling=sampling, budget=budget)
        assert isinstance(made, AgentLoopOperator)
        return made

    def streaming(self, agent_id: str, *, max_turns: int | None = None,
                  sampling: Mapping[str, Any] | None = None,
                  budget: Mapping[str, Any] | None = None) -> StreamingAgentLoopOperator:
        """The agent's streaming operator, as :meth:`whole` makes it."""
        made = self._operator(agent_id, streaming=True, max_turns=max_turns,
                              sampling=sampling, budget=budget)
        assert isinstance(made, StreamingAgentLoopOperator)
        return made

    def _operator(self, agent_id: str, *, streaming: bool, max_turns: int | None,
                  sampling: Mapping[str, Any] | None = None,
                  budget: Mapping[str, Any] | None = None) -> AgentOperator:
        definition = self.definition(agent_id)
        # A request's max_turns is also that of the agents the run may hand over to, so even
        # one equal to the agent's own may differ from theirs.
        retuned = max_turns is not None and (max_turns != definition.max_turns
                                             or bool(definition.handoffs))
        if sampling or budget or retuned:
            given = functools.partial(_given, max_turns=max_turns, sampling=sampling,
                                      budget=budget)
            return self._linked(self._build(replace(given(definition), streaming=streaming)),
                                streaming=streaming, given=given)
        key = (agent_id, streaming)
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = self._linked(
                self._build(replace(definition, streaming=streaming)), streaming=streaming)
        return made

    def _linked(self, operator: AgentOperator, *, streaming: bool,
                given: Callable[[AgentDef], AgentDef] | None = None) -> AgentOperator:
        """``operator``, its handoffs linked to the served agents they go to (the run goes
        on with them, recorded as the served agent's run), with what the request ``given``
        the run in place of their own (:func:`_given`)."""
        if operator.agent_def.handoffs:
            operator.engine.link_all(self.definitions, lambda definition: self._build(
                replace(definition, streaming=streaming)).engine, given=given)
        return operator
