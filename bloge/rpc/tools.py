"""``RemoteOperator``: an agent tool whose work runs in another service.

``tool searchKnowledgeBase : KBSearchOperator`` stays as it is in the DSL; the operator
registered under ``KBSearchOperator`` calls ``kb.search`` over a transport instead (settings:
``bloge.operators: {KBSearchOperator: "rpc:kb/search"}``). With the service's interface
known, the method's typed parameters give the tool its JSON schema and are checked before
anything is sent; a bad argument, or a remote failure, reaches the model as the tool's error,
like any tool failure.
"""

from __future__ import annotations

import json
from typing import Any

from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.core.operator import OperatorMetadata
from bloge.rpc.calls import Metadata
from bloge.rpc.errors import RemoteError
from bloge.rpc.interface import MethodSpec, methods_of
from bloge.rpc.proxy import Retry, call
from bloge.rpc.transport import Transport


class RemoteOperator:
    """Runs ``service.method`` over ``transport``; ``interface`` (the service's Protocol)
    types its input, else the input is sent as the JSON object it is."""

    def __init__(self, transport: Transport, service: str, method: str, *,
                 interface: type | None = None, deadline: float | None = None,
                 metadata: Metadata | None = None, retry: Retry | None = None) -> None:
        self.transport = transport
        self.service = service
        self.method = method
        self.deadline = deadline
        self.retry = retry or Retry()
        self._metadata = dict(metadata or {})
        self.spec: MethodSpec | None = None
        if interface is not None:
            specs = methods_of(interface)
            if method not in specs:
                raise BlogeUsageError(f"rpc:{service}/{method}: {interface.__name__} has no "
                                      f"method {method!r} (it has: {', '.join(sorted(specs))})")
            self.spec = specs[method]
        hint = self.spec.doc.split("\n\n", 1)[0].replace("\n", " ") if self.spec else ""
        self.metadata = OperatorMetadata(
            prompt_hint=hint or f"Calls {method} of the {service} service.",
            idempotent=self.spec is not None and self.spec.idempotent)
        self.aexecute = self._typed_entry_point()

    def _typed_entry_point(self) -> Any:
        # The agent runtime reads the annotation of the operator's input parameter for the
        # tool's schema and converts the arguments to it: one model per method.
        async def aexecute(input: Any, ctx: OperatorContext | None = None) -> Any:
            return await self._call(input)

        if self.spec is not None:
            aexecute.__annotations__ = {"input": self.spec.arguments, "return": Any}
        return aexecute

    async def _call(self, input: Any) -> Any:
        where = f"{self.service}.{self.method}"
        if self.spec is not None:
            values = input.model_dump() if hasattr(input, "model_dump") else dict(input)
            payload = self.spec.encode_arguments(where, values)
        else:
            try:
                payload = json.dumps(input)
            except (TypeError, ValueError) as exc:
                raise RemoteError("invalid_argument",
                                  f"{where}: the input cannot be sent as JSON: {exc}") from None
        reply = await call(self.transport, self.service, self.spec, self.method, payload,
                           deadline=self.deadline, metadata=self._metadata, retry=self.retry)
        if self.spec is not None:
            self.spec.decode_result(where, reply)
        return json.loads(reply)

    def __repr__(self) -> str:
        over = type(self.transport).__name__
        return f"<RemoteOperator rpc:{self.service}/{self.method} over {over}>"
