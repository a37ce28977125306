"""``bloge rpc services|call|serve``: the services of ``bloge.rpc.services`` — how each is
bound, one call to try it, and answering those exposed over NATS."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bloge_container.cli.console import EXIT_RUN_FAILED, err, failure, out, reported_errors
from bloge_container.cli.options import ConfigOption, ProfileOption, open_container

if TYPE_CHECKING:
    from bloge_container.application import ApplicationContainer

rpc = typer.Typer(help="RPC services: how each is bound, one call, answering over NATS.",
                  no_args_is_help=True, rich_markup_mode=None)


@rpc.command("services")
def services(config: ConfigOption = None, profile: ProfileOption = None) -> None:
    """Each service of bloge.rpc.services: where its calls go, and what this process
    exposes."""
    with reported_errors():
        container = open_container(config, profile)
        bound = container.rpc_services()
        if not bound.transports:
            out.print("no services: bloge.rpc.services is empty", markup=False)
            return
        for condition in container.report().conditions:
            if condition.component.startswith(("RpcService[", "RpcExposed[")):
                out.print(condition.line(), markup=False)


@rpc.command("call")
def call(
    service: Annotated[str, typer.Argument(help="A service of bloge.rpc.services.")],
    method: Annotated[str, typer.Argument(help="One of its methods.")],
    arguments: Annotated[str, typer.Argument(
        help='The arguments as a JSON object, e.g. \'{"query": "reset my password"}\'; '
        "@FILE reads them from a file, - from stdin.")] = "{}",
    deadline: Annotated[float | None, typer.Option(
        "--deadline", min=0.001, help="Seconds the call may take (default: the service's "
        "deadline setting).", show_default=False)] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Call one method as the application would, and print its JSON reply."""
    with reported_errors():
        text = _arguments(arguments)
        container = open_container(config, profile)
        reply = asyncio.run(_call(container, service, method, text, deadline))
        out.print(json.dumps(reply, indent=2, ensure_ascii=False), markup=False)


def _arguments(argument: str) -> str:
    """The call's arguments as JSON text: ``argument`` itself, the file ``@PATH`` names, or
    stdin for ``-`` (as curl reads ``-d``); checked to be one JSON object."""
    if argument == "-":
        where = "the arguments on stdin are"
        text = _read_stdin()
    elif argument.startswith("@"):
        where = f"the arguments file {argument[1:]} is"
        text = _read_file(argument[1:])
    else:
        where = "the arguments are"
        text = argument
    if not text.strip():
        raise failure(f"{where} empty; give a JSON object, e.g. {{}}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise failure(f"{where} not JSON at line {exc.lineno}, column {exc.colno}: "
                      f"{exc.msg}") from None
    if not isinstance(value, dict):
        raise failure(f"{where} {_json_kind(value)}; a JSON object is needed (the method's "
                      "arguments by name)")
    return text


def _read_file(name: str) -> str:
    from pathlib import Path

    if not name:
        raise failure("@ needs a file name: @args.json (or - for stdin)")
    try:
        return Path(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise failure(f"cannot read the arguments file {name}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise failure(f"the arguments file {name} is not UTF-8 text ({exc.reason} at byte "
                      f"{exc.start})") from None


def _read_stdin() -> str:
    import sys

    if sys.stdin is None:  # the command was started with stdin closed
        raise failure("- reads the arguments from stdin, and stdin is closed")
    try:
        return sys.stdin.read()
    except UnicodeDecodeError as exc:
        raise failure(f"the arguments on stdin are not UTF-8 text ({exc.reason} at byte "
                      f"{exc.start})") from None


def _json_kind(value: object) -> str:
    kinds = {list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


async def _call(container: ApplicationContainer, service: str, method: str, arguments: str,
                deadline: float | None) -> Any:
    from bloge import rpc
    from bloge.rpc.interface import methods_of
    from bloge.rpc.proxy import call as send
    from bloge_container.application import close_container

    try:
        bound = container.rpc_services()
        if service not in bound.transports:
            raise failure(f"bloge.rpc.services has no service {service!r} (it has: "
                          f"{', '.join(sorted(bound.transports)) or 'none'})")
        interface = bound.interfaces.get(service)
        spec = methods_of(interface).get(method) if interface is not None else None
        try:
            reply = await send(bound.transports[service], service, spec, method, arguments,
                               deadline=deadline or bound.settings[service].deadline)
            if spec is not None:  # the reply checked as a proxy checks it
                spec.decode_result(f"{service}.{method}", reply)
            return json.loads(reply)
        except rpc.RemoteError as exc:
            raise failure(str(exc), EXIT_RUN_FAILED) from None
        except ValueError as exc:
            raise failure(f"{service}.{method}: the reply is not JSON: {exc}",
                          EXIT_RUN_FAILED) from None
    finally:
        await close_container(container)


@rpc.command("serve")
def serve(
    nats: Annotated[list[str] | None, typer.Option(
        "--nats", help="NATS server URL (repeatable; default bloge.rpc.nats-servers).",
        show_default=False)] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Answer the services that list nats in their expose setting, over NATS, until Ctrl-C
    or SIGTERM (calls already running are finished first). Run several for replicas: they
    share the calls."""
    with reported_errors():
        container = open_container(config, profile)
        bound = container.rpc_services()
        handlers = bound.exposed["nats"]
        if not handlers:
            raise failure("no service lists nats in bloge.rpc.services.<name>.expose")
        try:
            from bloge.rpc.nats import NatsResponder
        except ImportError:
            raise failure("bloge rpc serve needs nats-py: pip install 'bloge[nats]'") from None
        servers = nats or list(bound.nats_servers)
        responder = NatsResponder(handlers, servers, **bound.responder_options())
        asyncio.run(_answer(responder, sorted(handlers), servers))


async def _answer(responder: Any, names: list[str], servers: list[str]) -> None:
    from bloge.core.masking import mask_url_credentials

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await responder.start()
    shown = ", ".join(mask_url_credentials(s) for s in servers)
    err.print(f"bloge rpc serve: {', '.join(names)} on NATS at {shown}; keyed calls "
              f"de-duplicated {responder.dedup}; Ctrl-C stops", markup=False)
    try:
        await stop.wait()
    finally:
        await responder.stop()
        err.print("bloge rpc serve: stopped", markup=False)
