"""``bloge threads list|show``: the conversations the store keeps."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bloge_container.cli.console import out, reported_errors
from bloge_container.cli.options import (
    ConfigOption,
    ProfileOption,
    open_container,
    opened_store,
    with_store,
)
from bloge_container.cli.runs_cmd import EvalsOption, when

if TYPE_CHECKING:
    from bloge.store import Store, StoredMessage, Thread

threads = typer.Typer(help="The conversations the run store keeps.", no_args_is_help=True,
                      rich_markup_mode=None)

#: How much of a message `threads show` prints on its line.
SHOWN = 200


@threads.command("list")
def list_threads(
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many.")] = 20,
    evals: EvalsOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """The most recently active threads first: id, agent, messages, last active. The threads
    of evals' cases (`bloge eval run`) are left out, unless --evals."""
    with reported_errors():
        found = with_store(opened_store(open_container(config, profile)),
                           lambda store: store.list_threads(limit=limit, evals=evals))
        if as_json:
            out.print(json.dumps([t.to_dict() for t in found], indent=2, ensure_ascii=False),
                      markup=False)
            return
        for thread in found:
            busy = f"  running {thread.active_run_id}" if thread.active_run_id else ""
            out.print(f"{thread.id}  {thread.agent_id or '-':<16} "
                      f"{thread.message_count:>5} messages  {when(thread.updated_at)}{busy}",
                      markup=False)
        if not found:
            out.print("no threads", markup=False)


@threads.command("show")
def show(
    thread_id: Annotated[str, typer.Argument(help="The thread's id (a unique prefix is enough).",
                                             show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """A thread's messages in order: number, role, text (tool calls and results too, masked
    as the journal masks them); those a sub-agent's run wrote on its caller's thread name the
    agent and the run (``--json``: each message's ``run_id``)."""
    with reported_errors():
        from bloge.store import guest_runs, masked_message

        async def read(store: Store) -> tuple[Thread, list[StoredMessage], dict[str, str]]:
            thread = await store.find_thread(thread_id)
            stored = await store.thread_messages(thread.id)
            return thread, stored, await guest_runs(store, stored)

        store = opened_store(open_container(config, profile))
        thread, stored, sub_agents = with_store(store, read)
        messages = [masked_message(store.redactor, m) for m in stored]
        if as_json:
            document = {**thread.to_dict(), "messages": messages}
            out.print(json.dumps(document, indent=2, ensure_ascii=False), markup=False)
            return
        out.print(f"thread {thread.id} · {thread.message_count} messages", markup=False)
        for message in messages:
            out.print(message_line(message, sub_agents), markup=False)


def message_line(message: Mapping[str, Any], sub_agents: Mapping[str, str]) -> str:
    """How ``threads show`` prints ``message`` (JSON data, ``masked_message``): its number,
    role and text, and, for a message of one of ``sub_agents``' runs (agents by run id),
    which agent's run wrote it."""
    line = f"{message['seq']:>5}  {_line(message)}"
    run_id = message.get("run_id") or ""
    agent = sub_agents.get(run_id)
    return line if agent is None else f"{line}  [sub-agent {agent}, run {run_id}]"


def _line(message: Mapping[str, Any]) -> str:
    """A message's line, from its JSON data (``masked_message``)."""
    text = " ".join(message["content"].split())
    if message.get("tool_calls"):
        calls = ", ".join(f"{c['name']}({c['arguments']})" for c in message["tool_calls"])
        text = f"{text} → {calls}".strip(" →") if text else f"→ {calls}"
    if message["role"] == "tool":
        text = f"[{message['tool_call_id']}{' error' if message.get('is_error') else ''}] {text}"
    return f"{message['role']:<9} {text if len(text) <= SHOWN else text[:SHOWN - 1] + '…'}"
