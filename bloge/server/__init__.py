"""``bloge.server``: agents over HTTP — the runs API with SSE, the runtime chapter's ``/chat``,
an OpenAI-compatible endpoint and a chat page (``pip install 'bloge[server]'``).

```python
from bloge import Agent, open_store
from bloge.server import create_app

app = create_app(agents=[Agent(llm, [lookup], name="support")], store=open_store())
```

``bloge serve`` builds all of this from the settings (``create_app(ServedAgents(definitions,
build), store=store, config=ServerConfig())``).
"""

try:
    import starlette  # noqa: F401 -- the extra's presence, checked once
except ImportError as exc:  # pragma: no cover - depends on the extras installed
    raise ImportError("bloge.server needs Starlette and uvicorn: pip install 'bloge[server]'") \
        from exc

from bloge.server.agents import ServedAgents, UnknownAgentError
from bloge.server.app import create_app
from bloge.server.config import ServerConfig
from bloge.server.metrics import Metrics

__all__ = ["Metrics", "ServedAgents", "ServerConfig", "UnknownAgentError", "create_app"]
