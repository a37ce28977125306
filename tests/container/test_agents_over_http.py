"""The container's agents through their sync facade, with a real HTTP provider talking to a
server on 127.0.0.1: one provider, one connection pool, any number of calls."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bloge_config import load_settings
from bloge_container import create_container
from bloge_container.application import close_container
from tests.llm.providers.conftest import OPENAI_KEY
from tests.llm.providers.support_servers import OpenAISupportServer
from tests.local_server import LocalServer


def test_a_container_agent_answers_every_execute_over_one_connection(project: Path) -> None:
    with LocalServer(OpenAISupportServer()) as server:
        environ = {"BLOGE_LLM__PROVIDER": "openai", "OPENAI_API_KEY": OPENAI_KEY,
                   "OPENAI_BASE_URL": server.url("/v1")}
        container = create_container(load_settings(base_dir=project, environ=environ),
                                     project_dir=project)
        agent = container.agents()["customerSupport"].operator
        answers = [agent.execute("How do I reset my password?").content for _ in range(3)]
        asyncio.run(close_container(container))
        assert len(set(answers)) == 1
        assert answers[0].startswith("I found KB-")
        assert server.wait_until_closed(1) == server.opened == 1
