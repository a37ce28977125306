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
from bloge.rpc.proxy import proxy as proxy

# Each transport loads on first use: HTTP needs httpx, NATS nats-py (extra [nats]).
if TYPE_CHECKING:
    from bloge.rpc.calls import CallInfo as CallInfo
    from bloge.rpc.calls import Handler as Handler
    from bloge.rpc.calls import Metadata as Metadata
    from bloge.rpc.calls import current_call as current_call
    from bloge.rpc.errors import HTTP_STATUS as HTTP_STATUS
    from bloge.rpc.errors import ErrorCode as ErrorCode
    from bloge.rpc.errors import RemoteError as RemoteError
    from bloge.rpc.http import HttpTransport as HttpTransport
    from bloge.rpc.interface import idempotent as idempotent
    from bloge.rpc.nats import NatsResponder as NatsResponder
    from bloge.rpc.nats import NatsTransport as NatsTransport
    from bloge.rpc.proxy import Retry as Retry
    from bloge.rpc.proxy import call_options as call_options
    from bloge.rpc.service import ServiceHandler as ServiceHandler
    from bloge.rpc.service import serve as serve
    from bloge.rpc.tools import RemoteOperator as RemoteOperator
    from bloge.rpc.transport import InProcessTransport as InProcessTransport
    from bloge.rpc.transport import Transport as Transport
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
