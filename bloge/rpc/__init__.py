"""``bloge.rpc``: program against an interface; bind it in-process or remote.

Business code declares a ``typing.Protocol`` of async methods and calls it through a proxy;
where the implementation runs — this process, another ``bloge serve`` over HTTP, replicas
behind NATS — is decided where the application is wired (``bloge.rpc.services``)::

    class KnowledgeBase(Protocol):
        @rpc.idempotent
        async def search(self, query: str, limit: int = 3) -> list[Article]: ...

    transport = rpc.InProcessTransport()
    transport.register("kb", rpc.serve(BundledKnowledgeBase(), as_=KnowledgeBase))
    kb = rpc.proxy(KnowledgeBase, transport, "kb")
    articles = await kb.search("reset my password")

Swap ``InProcessTransport()`` for ``HttpTransport("http://kb:8000")`` or
``NatsTransport(["nats://127.0.0.1:4222"])`` (extra ``[nats]``) and nothing else changes:
every transport carries JSON text, so the in-process one serializes too.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

# ``proxy`` is also the name of its module, which the import system binds in this package
# when the module loads: the function is bound here, eagerly, so that it wins.
from bloge.rpc.proxy import proxy

if TYPE_CHECKING:
    from bloge.rpc.calls import CallInfo, Handler, Metadata, current_call
    from bloge.rpc.errors import HTTP_STATUS, ErrorCode, RemoteError
    from bloge.rpc.http import HttpTransport
    from bloge.rpc.interface import idempotent
    from bloge.rpc.nats import NatsResponder, NatsTransport
    from bloge.rpc.proxy import Retry, call_options
    from bloge.rpc.service import ServiceHandler, serve
    from bloge.rpc.tools import RemoteOperator
    from bloge.rpc.transport import InProcessTransport, Transport
else:
    # Each transport loads on first use: HTTP needs httpx, NATS nats-py (extra [nats]).
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.rpc.calls": ["CallInfo", "Handler", "Metadata", "current_call"],
        "bloge.rpc.errors": ["HTTP_STATUS", "ErrorCode", "RemoteError"],
        "bloge.rpc.http": ["HttpTransport"],
        "bloge.rpc.interface": ["idempotent"],
        "bloge.rpc.nats": ["NatsResponder", "NatsTransport"],
        "bloge.rpc.proxy": ["Retry", "call_options"],
        "bloge.rpc.service": ["ServiceHandler", "serve"],
        "bloge.rpc.tools": ["RemoteOperator"],
        "bloge.rpc.transport": ["InProcessTransport", "Transport"],
    })

__all__ = [
    "HTTP_STATUS",
    "CallInfo",
    "ErrorCode",
    "Handler",
    "HttpTransport",
    "InProcessTransport",
    "Metadata",
    "NatsResponder",
    "NatsTransport",
    "RemoteError",
    "RemoteOperator",
    "Retry",
    "ServiceHandler",
    "Transport",
    "call_options",
    "current_call",
    "idempotent",
    "proxy",
    "serve",
]

