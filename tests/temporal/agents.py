"""The agents the Temporal tests run, shared by the tests and by the worker processes they
start (``worker_child.py``).

``slow`` and the streaming ``slowStream`` call a ``gate`` that outlasts their tool timeout;
``held`` calls ``hold`` (not idempotent), which holds until released. A message that starts
with ``ask`` makes turn 1 call ``asker``'s external ``ask_user``, one that starts with
``client`` the run's own tool ``client_fn``.
``keeper`` (``keep X``) asks for its ``gate``, which waits for approval, as ``c1`` in turn 1
(as ``c1`` again when the turn is asked again), and answers in turn 2; ``rekeeper`` (``again
X``) asks for it as ``c1`` in turn 1 and in turn 2, and answers in turn 3.
``counter`` counts: its turn 1 asks for ``count`` (non-idempotent, one line per call in
``COUNT_LOG``) and ``gate`` (idempotent; it blocks for ever where ``hang_gate`` is set, the
worker a test kills) at once; turn 2 answers with what the tools returned. A message that
starts with ``stall`` makes the model call wait until it is cancelled (``STALLED`` is set
once it waits).
``delegator`` asks its sub-agent ``researcher`` (a tool, ``research``) in turn 1, calls
``gate`` in turn 2 and answers in turn 3; ``researcher`` counts (``count``) and answers with
what it counted (``research loop``: it counts until it runs out of turns). ``overseer`` is
``delegator`` asking ``vetted``, a ``researcher`` whose ``count`` needs approval; ``thrifty``
is ``delegator`` allowed two model calls in all, ``frugal`` three. ``bounded`` is ``delegator``
asking ``digger`` (``research both``: two counts at once), whose tool caps its sub-agents'
tool calls at one. ``triage`` hands
``bill …`` over to ``biller``, which counts and answers. The streaming ``herald`` is
``delegator`` asking ``middle``, which asks ``researcher``, then calls ``gate`` (``delegate
relay pay``: two levels of child runs). ``briefer`` (``brief …``) says a word and asks ``researcher``, which
starts from its conversation (``context = "parent"``), to ``recall …``: that answer lists
the messages the model was shown.
On the caller's thread (``thread = "parent"``): ``fanner`` (``fan X``) asks ``researcher``
three times at once, then answers; ``nested`` is ``delegator`` asking ``middler``, a
``middle`` whose ``researcher`` is on the thread too (``delegate relay X``); ``confider`` is
``briefer`` with its ``researcher`` on its thread; ``watcher`` (``watch X``) asks
``researcher`` twice and ``prober`` (``count``, then ``gate``) at once; ``warden`` is
``overseer`` with its ``vetted`` on its thread.
Outliving a lease: ``waiter`` (``wait X``) asks ``stayer`` (``stay X``), which calls ``hold``,
then ``gate``, then answers; ``sharer`` is ``waiter`` with its ``stayer`` on its thread.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bloge import (
    AgentDef,
    AgentDslCompiler,
    AgentLoopOperator,
    LlmChatOperator,
    LlmStreamingChatOperator,
    OperatorRegistry,
)
from bloge.agent import SubAgentTool
from bloge.agent.caller_thread import SubAgentThread
from bloge.agent.memory.summary import SUMMARIZE_PROMPT
from bloge.core.context import OperatorContext
from bloge.core.errors import ProviderError
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ToolCall

COUNT = "tool count : Count { input { key = tool_args.key } }"
HOLD = "tool hold : Hold { input { name = tool_args.name } }"
APPROVED_COUNT = "tool count : Count { input { key = tool_args.key }  requires_approval = true }"
GATE = "tool gate : Gate { input { name = tool_args.name } }"
APPROVED_GATE = ("tool gate : Gate { input { name = tool_args.name }  "
                 "requires_approval = true }")


def _agent(name: str, max_turns: int, *body: str, stream: bool = False) -> str:
    """An agent of the test model, allowed ``max_turns``, with ``body``'s lines."""
    lines = "".join(f"  {line}\n" for line in body)
    kind = "stream agent" if stream else "agent"
    return f'{kind} {name} {{\n  model = "test-model"\n  max_turns = {max_turns}\n{lines}}}\n'


def _asking(name: str, sub_agent: str, *body: str, description: str | None = None,
            turns: int = 3, where: str = "") -> str:
    """``delegator``'s shape: an agent of ``turns`` turns that may ask ``sub_agent`` (its
    tool ``research``, with ``where``'s settings) and call ``gate``."""
    told = description or f"Ask the {sub_agent}"
    return _agent(name, turns, *body,
                  f'tool research : agent {sub_agent} {{ description = "{told}"{where} }}',
                  GATE)


ON_ITS_THREAD = '  thread = "parent"'


AGENTS = "\n".join((
    _agent("counter", 3, "max_tool_concurrency = 2", COUNT, GATE),
    _agent("looper", 2, COUNT),
    _agent("slow", 2, "tool_timeout = 0.5", GATE),
    _agent("held", 2, HOLD),
    _agent("marathon", 1000, "tool step : Step { input { n = tool_args.n } }"),
    _agent("reader", 3),
    _agent("guarded", 2, APPROVED_COUNT),
    _agent("keeper", 2, APPROVED_GATE),
    _agent("rekeeper", 3, APPROVED_GATE),
    _agent("asker", 2, 'tool ask_user : external { description = "Ask the user"  '
                       'parameters { q = "string" } }'),
    _asking("delegator", "researcher"),
    _agent("researcher", 2, COUNT),
    _asking("thrifty", "researcher", "budget { model_calls = 2 }"),
    _asking("frugal", "researcher", "budget { model_calls = 3 }"),
    _asking("bounded", "digger"),
    _agent("digger", 2, COUNT),
    _asking("overseer", "vetted", description="Ask the vetted researcher"),
    _agent("vetted", 2, APPROVED_COUNT),
    _agent("triage", 3, 'handoff billing : agent biller { description = "Billing questions" }'),
    _agent("biller", 3, COUNT),
    _agent("herald", 3, 'tool research : agent middle { description = "Ask the middle" }', GATE,
           stream=True),
    _agent("middle", 4, 'tool research : agent researcher { description = "Ask the researcher" }',
           GATE),
    _agent("briefer", 3, 'system_prompt = "You brief."',
           'tool research : agent researcher { description = "Ask the researcher"  '
           'context = "parent" }'),
    _agent("slowStream", 2, "tool_timeout = 0.5", GATE, stream=True),
    _asking("fanner", "researcher", where=ON_ITS_THREAD),
    _asking("nested", "middler", where=ON_ITS_THREAD),
    _asking("middler", "researcher", turns=4, where=ON_ITS_THREAD),
    _agent("confider", 3, 'system_prompt = "You brief."',
           'tool research : agent researcher { description = "Ask the researcher"  '
           'context = "parent"  thread = "parent" }'),
    _agent("watcher", 3, f'tool research : agent researcher {{ description = "Ask the '
                         f'researcher"{ON_ITS_THREAD} }}',
           f'tool probe : agent prober {{ description = "Probe"{ON_ITS_THREAD} }}'),
    _agent("prober", 3, COUNT, GATE),
    _asking("warden", "vetted", description="Ask the vetted researcher", where=ON_ITS_THREAD),
    _agent("waiter", 2, 'tool stay : agent stayer { description = "Stay" }'),
    _agent("sharer", 2, f'tool stay : agent stayer {{ description = "Stay"{ON_ITS_THREAD} }}'),
    _agent("stayer", 3, HOLD, GATE),
))


#: Set when a ``stall`` model call waits.
STALLED = threading.Event()


async def _stall() -> LlmResponse:
    STALLED.set()
    await asyncio.Event().wait()  # until the call is cancelled
    raise AssertionError("unreachable")


def model(request: LlmRequest) -> LlmResponse | Awaitable[LlmResponse]:
    """counter: tools in turn 1, the answer in turn 2; looper: a tool call every turn;
    ``marathon N`` (the last user message): a step a turn until the answer in turn N;
    ``read …``: how many bytes of content in how many messages the model was shown;
    ``cap``: the ``max_tokens`` the request carried; ``down``: ``test-model`` fails (an HTTP
    500, which fails over), another model says it answered. A ``summary(n)`` memory's summary
    (``counter``'s, given one) costs 40,000 prompt tokens, and tells its ``max_tokens``."""
    if request.messages and request.messages[0].content == SUMMARIZE_PROMPT:
        return LlmResponse(f"summarized, max_tokens {request.max_tokens}",
                           prompt_tokens=40_000, completion_tokens=8)
    answered = sum(1 for m in request.messages if m.role == "assistant")
    # A summarized view may have folded the user's message into its summary.
    last = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
    if last.startswith("marathon"):
        return _marathon(request, int(last.split()[1]))
    if last.startswith("read"):
        shown = sum(len(m.content) for m in request.messages)
        return LlmResponse(f"read {shown} bytes in {len(request.messages)} messages",
                           prompt_tokens=1, completion_tokens=1)
    if last == "cap":
        return LlmResponse(f"max_tokens {request.max_tokens}")
    if last == "down":
        if request.model == "test-model":
            raise ProviderError("overloaded", provider="test", status_code=500)
        return LlmResponse(f"answered by {request.model}")
    if last.startswith("recall"):
        return LlmResponse("recalled: " + " / ".join(f"{m.role}:{m.content}"
                                                     for m in request.messages))
    if last.startswith("brief"):  # the thread may hold earlier runs: this one's turns
        if request.messages[-1].role == "user":
            return LlmResponse("Asking.", "tool_calls", tool_calls=(ToolCall(
                "r1", "research", json.dumps({"input": "recall " + last.split(" ", 1)[1]})),))
        return LlmResponse("briefed: " + request.messages[-1].content)
    user = next((m.content for m in request.messages if m.role == "user"), "")
    if user.startswith("fan"):
        return _fanned(request, user, answered)
    if user.startswith(("watch", "probe")):
        return _watched(request, user, answered)
    if user.startswith(("wait", "stay")):
        return _stayed(request, user, answered)
    if user.startswith(("delegate", "research", "bill")):
        return _composed(request, user, answered)
    if user.startswith("stall"):
        return _stall()
    if user.startswith(("ask", "client")) and answered == 0:
        # ask: the agent's external tool; client: the run's own tool (a /v1 client's).
        name = "ask_user" if user.startswith("ask") else "client_fn"
        return LlmResponse("", "tool_calls", tool_calls=(
            ToolCall("e1", name, json.dumps({"q": user})),))
    if user.startswith("keep") and answered == 0:
        return LlmResponse("", "tool_calls", tool_calls=(
            ToolCall("c1", "gate", json.dumps({"name": user})),))
    if user.startswith("again") and answered < 2:
        return LlmResponse("", "tool_calls", tool_calls=(
            ToolCall("c1", "gate", json.dumps({"name": f"{user} {answered}"})),))
    if user.startswith("loop"):
        return LlmResponse("", "tool_calls", tool_calls=(
            ToolCall(f"c{answered}", "count", json.dumps({"key": user})),))
    if user.startswith("hold"):
        if answered == 0:
            return LlmResponse("", "tool_calls", tool_calls=(
                ToolCall("h1", "hold", '{"name": "on"}'),))
        return LlmResponse("told: " + request.messages[-1].content)
    if user.startswith("slow"):
        if answered == 0:
            return LlmResponse("", "tool_calls", tool_calls=(
                ToolCall("g1", "gate", '{"name": "forever"}'),))
        return LlmResponse("told: " + request.messages[-1].content, prompt_tokens=3,
                           completion_tokens=2)
    if answered == 0:
        return LlmResponse("", "tool_calls", prompt_tokens=5, completion_tokens=1, tool_calls=(
            ToolCall("c1", "count", json.dumps({"key": user})),
            ToolCall("c2", "gate", json.dumps({"name": user}))))
    results = [m.content for m in request.messages if m.role == "tool"]
    return LlmResponse("answer: " + " | ".join(results), prompt_tokens=7, completion_tokens=3)


def _composed(request: LlmRequest, user: str, answered: int) -> LlmResponse:
    """delegator, researcher, triage and biller (see the module's docs)."""
    results = [m.content for m in request.messages if m.role == "tool"]
    if user.startswith("delegate"):
        if answered == 0:
            return LlmResponse("", "tool_calls", tool_calls=(ToolCall(
                "r1", "research", json.dumps({"input": "research " + user.split(" ", 1)[1]})),))
        if answered == 1:
            return LlmResponse("", "tool_calls", tool_calls=(
                ToolCall("g1", "gate", json.dumps({"name": user})),))
        return LlmResponse("delegated: " + " | ".join(results))
    if user.startswith("research relay"):  # middle: asks researcher, then calls gate
        if answered == 0:
            return LlmResponse("", "tool_calls", tool_calls=(ToolCall(
                "m1", "research", json.dumps({"input": "research " + user.split(" ", 2)[2]})),))
        if answered == 1:
            return LlmResponse("", "tool_calls", tool_calls=(
                ToolCall("g1", "gate", json.dumps({"name": "relay"})),))
        return LlmResponse("relayed: " + " | ".join(results))
    if user.startswith("research"):
        if answered == 0 and user == "research both":
            return LlmResponse("", "tool_calls", tool_calls=tuple(
                ToolCall(f"n{n}", "count", json.dumps({"key": user})) for n in range(2)))
        if user == "research both":
            return LlmResponse("found: " + " | ".join(results))
        if answered == 0 or user == "research loop":
            return LlmResponse("", "tool_calls", tool_calls=(
                ToolCall(f"n{answered}", "count", json.dumps({"key": user})),))
        return LlmResponse("found: " + results[-1])
    offered = sorted(tool.name for tool in request.tools)
    if answered == 0:
        if "transfer_to_billing" not in offered:
            return LlmResponse("no handoff offered: " + ",".join(offered))
        return LlmResponse("", "tool_calls", tool_calls=(
            ToolCall("t1", "transfer_to_billing", json.dumps({"reason": "a bill"})),))
    if answered == 1:  # biller's turn: its tools, not triage's
        return LlmResponse("", "tool_calls", tool_calls=(
            ToolCall("b1", "count", json.dumps({"key": ",".join(offered)})),))
    return LlmResponse("billed: " + results[-1])


def _fanned(request: LlmRequest, user: str, answered: int) -> LlmResponse:
    """``fan X``: three ``research`` calls at once (``research X1`` … ``X3``), then the
    answer with their results."""
    if answered == 0:
        topic = user.split(" ", 1)[1]
        return LlmResponse("Asking three.", "tool_calls", tool_calls=tuple(
            ToolCall(f"f{n}", "research", json.dumps({"input": f"research {topic}{n}"}))
            for n in (1, 2, 3)))
    return LlmResponse("fanned: " + " | ".join(m.content for m in request.messages
                                               if m.role == "tool"))


def _watched(request: LlmRequest, user: str, answered: int) -> LlmResponse:
    """``watch X``: ``research X1``, ``research X2`` and ``probe X3`` at once, then the
    answer; ``probe …`` (prober): ``count``, then ``gate``, then the answer."""
    results = [m.content for m in request.messages if m.role == "tool"]
    topic = user.split(" ", 1)[1]
    if user.startswith("probe"):
        if answered < 2:
            name, key = ("count", "key") if answered == 0 else ("gate", "name")
            return LlmResponse("", "tool_calls", tool_calls=(
                ToolCall(f"p{answered}", name, json.dumps({key: user})),))
        return LlmResponse("probed: " + " | ".join(results))
    if answered == 0:
        return LlmResponse("Watching.", "tool_calls", tool_calls=(
            ToolCall("w1", "research", json.dumps({"input": f"research {topic}1"})),
            ToolCall("w2", "research", json.dumps({"input": f"research {topic}2"})),
            ToolCall("w3", "probe", json.dumps({"input": f"probe {topic}3"}))))
    return LlmResponse("watched: " + " | ".join(results))


def _stayed(request: LlmRequest, user: str, answered: int) -> LlmResponse:
    """``wait X``: ``stay X``, then the answer; ``stay X`` (stayer): ``hold``, then
    ``gate``, then the answer."""
    results = [m.content for m in request.messages if m.role == "tool"]
    topic = user.split(" ", 1)[1]
    if user.startswith("wait"):
        if answered == 0:
            return LlmResponse("Waiting.", "tool_calls", tool_calls=(
                ToolCall("s1", "stay", json.dumps({"input": f"stay {topic}"})),))
        return LlmResponse("waited: " + " | ".join(results))
    if answered < 2:
        name = "hold" if answered == 0 else "gate"
        return LlmResponse("", "tool_calls", tool_calls=(
            ToolCall(f"t{answered}", name, json.dumps({"name": topic})),))
    return LlmResponse("stayed: " + " | ".join(results))


def _marathon(request: LlmRequest, turns: int) -> LlmResponse:
    """A step per turn, each seeing the steps before it, until turn ``turns`` answers."""
    start = max(i for i, m in enumerate(request.messages) if m.role == "user")
    done = sum(1 for m in request.messages[start:] if m.role == "tool")
    if done + 1 >= turns:
        return LlmResponse(f"ran {done} steps", prompt_tokens=2, completion_tokens=1)
    return LlmResponse("", "tool_calls", prompt_tokens=2, completion_tokens=1, tool_calls=(
        ToolCall(f"s{done + 1}", "step", json.dumps({"n": str(done + 1)})),))


Announce = Callable[[str], None]
"""Told of each call as it runs (a worker process prints it for the test to read)."""


def _silent(line: str) -> None:
    pass


class Count:
    """Counts its calls in a file, one line each: running it twice is visible."""

    def __init__(self, log: Path, announce: Announce = _silent) -> None:
        self.log = log
        self.announce = announce

    def execute(self, input: dict[str, Any], ctx: OperatorContext) -> str:
        with self.log.open("a", encoding="utf-8") as file:
            file.write(f"{ctx.idempotency_key}\n")
        self.announce(f"counted {ctx.idempotency_key}")
        return f"counted {input['key']}"


class Gate:
    """Opens at once, or when ``release`` is set where ``hang`` is set (or for the name
    ``forever``); opening twice does no harm."""

    idempotent = True

    def __init__(self, *, hang: bool, started: Path | None = None,
                 announce: Announce = _silent) -> None:
        self.hang = hang
        self.started = started
        self.announce = announce
        self.entered = threading.Event()
        self.release = threading.Event()

    def execute(self, input: dict[str, Any], ctx: OperatorContext) -> str:
        if self.started is not None:
            with self.started.open("a", encoding="utf-8") as file:
                file.write(f"{ctx.idempotency_key}\n")
        self.entered.set()
        self.announce(f"gate {ctx.idempotency_key}")
        if self.hang or input["name"] == "forever":
            self.release.wait()
        return f"opened {input['name']}"


class Step:
    """Answers with its step's number; step ``hold_at`` holds until ``release`` is set."""

    def __init__(self, hold_at: int | None = None) -> None:
        self.hold_at = hold_at
        self.entered = threading.Event()
        self.release = threading.Event()

    def execute(self, input: dict[str, Any], ctx: OperatorContext) -> str:
        if int(input["n"]) == self.hold_at:
            self.entered.set()
            self.release.wait()
        return f"step {input['n']}"


class Hold:
    """Holds until ``release`` is set; not idempotent (a second run is not safe)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def execute(self, input: dict[str, Any], ctx: OperatorContext) -> str:
        self.entered.set()
        self.release.wait()
        return f"held {input['name']}"


def registry(count_log: Path, *, hang_gate: bool = False, gate_log: Path | None = None,
             announce: Announce = _silent, hold_step: int | None = None) -> OperatorRegistry:
    return (OperatorRegistry.builder()
            .register("Count", Count(count_log, announce))
            .register("Gate", Gate(hang=hang_gate, started=gate_log, announce=announce))
            .register("Hold", Hold())
            .register("Step", Step(hold_step))
            .register("llmChat", LlmChatOperator(FunctionProvider(model)))
            .register("llmStreamingChat", LlmStreamingChatOperator(FunctionProvider(model)))
            .build())


def definitions(registry: OperatorRegistry) -> dict[str, AgentDef]:
    """The agents, ``research``'s sub-agent operator registered (once) in ``registry``: its
    agent's operator has a registry of its own (of ``registry``'s operators it uses), so that
    ``registry`` is in no reference cycle, and is freed as the tests before these were."""
    compiled = {d.id: d for d in AgentDslCompiler(registry).compile_all(AGENTS)}
    # middle last: it asks researcher. A run in process streams its sub-agents.
    for agent_id, ceiling in (("researcher", 200), ("vetted", 200), ("digger", 1),
                              ("middle", 200)):
        if f"agent:{agent_id}" not in registry:
            own = OperatorRegistry.builder()
            for ref in ("Count", "Gate", "llmChat", "llmStreamingChat", "agent:researcher"):
                if ref in registry:
                    own.register(ref, registry.get(ref))
            registry.register(f"agent:{agent_id}", SubAgentTool(
                AgentLoopOperator(agent_id, compiled[agent_id], own.build()),
                max_descendant_tool_calls=ceiling))
    if "agent:researcher:parent" not in registry:
        registry.register("agent:researcher:parent", SubAgentTool(
            registry.get("agent:researcher").agent, context="parent"))
    # On the caller's thread: researcher (fanner's, middler's, confider's), middler (nested's).
    for ref, context in (("agent:researcher:thread-parent", "fresh"),
                         ("agent:researcher:parent:thread-parent", "parent")):
        if ref not in registry:
            registry.register(ref, SubAgentTool(registry.get("agent:researcher").agent,
                                                context=context, thread="parent"))
    if "agent:vetted:thread-parent" not in registry:
        registry.register("agent:vetted:thread-parent", SubAgentTool(
            registry.get("agent:vetted").agent, thread="parent"))
    stayers: tuple[tuple[str, SubAgentThread], ...] = (
        ("agent:stayer", "fresh"), ("agent:stayer:thread-parent", "parent"))
    for ref, thread in stayers:
        if ref not in registry:
            own = OperatorRegistry.builder()
            for used in ("Hold", "Gate", "llmChat", "llmStreamingChat"):
                own.register(used, registry.get(used))
            registry.register(ref, SubAgentTool(
                AgentLoopOperator("stayer", compiled["stayer"], own.build()), thread=thread))
    for agent_id in ("middler", "prober"):
        if f"agent:{agent_id}:thread-parent" not in registry:
            own = OperatorRegistry.builder()
            for ref in ("Count", "Gate", "llmChat", "llmStreamingChat",
                        "agent:researcher:thread-parent"):
                own.register(ref, registry.get(ref))
            registry.register(f"agent:{agent_id}:thread-parent", SubAgentTool(
                AgentLoopOperator(agent_id, compiled[agent_id], own.build()),
                thread="parent"))
    return compiled
