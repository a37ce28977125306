"""``bloge.rpc.services``: each service bound to a proxy over the transport its settings name
(``in-process`` runs the implementation here, serializing as a network would), what this
process exposes, and the ``rpc:<service>/<method>`` operators of ``bloge.operators``."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from bloge_config import BlogeSettings
from bloge_config.models import RpcRepliesSettings, RpcServiceSettings
from bloge_container.components import ProjectDir
from bloge_container.errors import ConfigurationError
from bloge_container.imports import instantiate, resolve
from bloge_container.report import ConditionsReport


@dataclass(slots=True)
class RpcServices:
    """The services of ``bloge.rpc.services``, bound: ``client("kb")`` (or
    ``client(KnowledgeBase)``) is what business code calls."""

    clients: dict[str, Any] = field(default_factory=dict)
    transports: dict[str, Any] = field(default_factory=dict)
    interfaces: dict[str, type] = field(default_factory=dict)
    settings: dict[str, RpcServiceSettings] = field(default_factory=dict)
    exposed: dict[str, dict[str, Any]] = field(default_factory=lambda: {"http": {}, "nats": {}})
    nats_servers: tuple[str, ...] = ()
    replies: RpcRepliesSettings = field(default_factory=RpcRepliesSettings)

    def responder_options(self) -> dict[str, Any]:
        """The keyword arguments of ``NatsResponder`` that ``bloge.rpc.replies`` sets."""
        return {"replies_bucket": self.replies.bucket, "replies_ttl": self.replies.ttl,
                "claim_lease": self.replies.claim_lease}

    def client(self, service: str | type) -> Any:
        """The bound client of ``service`` (a name, or the interface it was declared with)."""
        if isinstance(service, type):
            names = [name for name, declared in self.interfaces.items() if declared is service]
            if len(names) != 1:
                raise ConfigurationError(f"{len(names)} services of bloge.rpc.services "
                                         f"declare interface {service.__qualname__}; name one")
            service = names[0]
        if service not in self.clients:
            raise ConfigurationError(f"bloge.rpc.services has no typed service {service!r} "
                                     f"(typed ones: {', '.join(sorted(self.clients)) or 'none'})")
        return self.clients[service]

    def remote_operator(self, name: str, reference: str) -> Any:
        """The operator ``rpc:<service>/<method>`` of ``bloge.operators.<name>``."""
        from bloge import BlogeUsageError
        from bloge.rpc import RemoteOperator, Retry

        service, _, method = reference.removeprefix("rpc:").partition("/")
        if service not in self.transports:
            raise ConfigurationError(
                f"bloge.operators.{name}: {reference!r} names the service {service!r}, which "
                f"bloge.rpc.services does not define (it defines: "
                f"{', '.join(sorted(self.transports)) or 'none'})")
        section = self.settings[service]
        retry = section.retry
        try:
            return RemoteOperator(
                self.transports[service], service, method,
                interface=self.interfaces.get(service), deadline=section.deadline,
                retry=Retry(retry.max_attempts, retry.initial_backoff, retry.multiplier,
                            retry.max_backoff))
        except BlogeUsageError as exc:  # no such method on the interface
            raise ConfigurationError(f"bloge.operators.{name}: {exc}") from exc


def rpc_services(settings: BlogeSettings, project: ProjectDir, report: ConditionsReport,
                 closables: list[Any]) -> RpcServices:
    """Every service of ``bloge.rpc.services``, bound, each decision in the report."""
    bound = RpcServices(nats_servers=settings.rpc.nats_servers, replies=settings.rpc.replies)
    if not settings.rpc.services:
        return bound
    from bloge import rpc

    local = rpc.InProcessTransport()
    for name, section in settings.rpc.services.items():
        key = f"bloge.rpc.services.{name}"
        interface = _interface(section, key, project)
        implementation = None
        if section.implementation is not None:
            implementation = instantiate(resolve(section.implementation,
                                                 key=f"{key}.implementation",
                                                 project_dir=project.path),
                                         key=f"{key}.implementation")
        handler = _handler(implementation, interface, key)
        if handler is not None:
            local.register(name, handler)
            for way in section.expose:
                bound.exposed[way][name] = handler
                report.record(f"RpcExposed[{name}/{way}]", registered=True, kind="on-property",
                              reason=f"{key}.expose lists {way}: " + (
                                  f"bloge serve answers POST /rpc/{name}/<method>"
                                  if way == "http" else "bloge rpc serve answers on NATS; "
                                  + _dedup(settings.rpc.replies)))
        transport, where = _transport(name, section, settings, local, closables)
        bound.transports[name] = transport
        bound.settings[name] = section
        if interface is not None:
            bound.interfaces[name] = interface
            retry = section.retry
            bound.clients[name] = rpc.proxy(
                interface, transport, name, deadline=section.deadline,
                retry=rpc.Retry(retry.max_attempts, retry.initial_backoff, retry.multiplier,
                                retry.max_backoff))
        typed = f"{interface.__qualname__} bound to a proxy" if interface else \
            "untyped (no interface: rpc: operators send their input as it is)"
        report.record(f"RpcService[{name}]", registered=True, kind="on-property",
                      reason=f"{key}.transport is {section.transport!r}: {typed} {where}")
    return bound


def _dedup(replies: RpcRepliesSettings) -> str:
    if replies.bucket is None:
        return "keyed calls de-duplicated in each process (bloge.rpc.replies.bucket is null)"
    return (f"keyed calls de-duplicated across replicas in the JetStream bucket "
            f"{replies.bucket} (bloge.rpc.replies: replies kept {replies.ttl:g}s, claim lease "
            f"{replies.claim_lease:g}s; in each process where the server has no JetStream)")


def _interface(section: RpcServiceSettings, key: str, project: ProjectDir) -> type | None:
    if section.interface is None:
        return None
    interface = resolve(section.interface, key=f"{key}.interface", project_dir=project.path)
    if not isinstance(interface, type):
        raise ConfigurationError(f"{key}.interface: {section.interface!r} is not a class "
                                 "(a typing.Protocol of async methods)")
    from bloge import BlogeUsageError
    from bloge.rpc.interface import methods_of

    try:
        methods_of(interface)
    except BlogeUsageError as exc:
        raise ConfigurationError(f"{key}.interface: {exc}") from exc
    return interface


def _handler(implementation: object, interface: type | None, key: str) -> Any:
    if implementation is None or interface is None:
        return None
    from bloge import BlogeUsageError, rpc

    try:
        return rpc.serve(implementation, as_=interface)
    except BlogeUsageError as exc:
        raise ConfigurationError(f"{key}.implementation: {exc}") from exc


def _transport(name: str, section: RpcServiceSettings, settings: BlogeSettings, local: Any,
               closables: list[Any]) -> tuple[Any, str]:
    from bloge import rpc
    from bloge.core.masking import mask_url_credentials

    if section.transport == "in-process":
        return local, f"over the in-process transport to {section.implementation}"
    if section.transport == "http":
        assert section.url is not None  # the settings model checks it
        http = rpc.HttpTransport(section.url,
                                 api_key=section.api_key.get_secret_value() or None)
        closables.append(http)
        return http, f"over HTTP to {mask_url_credentials(section.url)}"
    if importlib.util.find_spec("nats") is None:
        raise ConfigurationError(f"bloge.rpc.services.{name}.transport is 'nats' but nats-py "
                                 "is not installed: pip install 'bloge[nats]'")
    from bloge.rpc.nats import NatsTransport

    servers = section.url.split(",") if section.url else list(settings.rpc.nats_servers)
    nats = NatsTransport(servers)
    closables.append(nats)
    return nats, "over NATS at " + ", ".join(mask_url_credentials(s) for s in servers)
