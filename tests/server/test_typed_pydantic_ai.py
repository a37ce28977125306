"""Pydantic AI's ``NativeOutput`` (a ``response_format`` of type ``json_schema``) and
``PromptedOutput`` against a real ``bloge serve``: the agent on the server answers with the
client's type."""

from __future__ import annotations

import openai
import pydantic_ai
from pydantic import BaseModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from bloge.llm import ScriptedProvider
from tests.server.conftest import Serve


class Ticket(BaseModel):
    title: str
    priority: int


async def _run(url: str, output: object) -> object:
    """The output of a Pydantic AI agent whose model is the served agent, its client closed."""
    async with openai.AsyncOpenAI(base_url=url, api_key="none", max_retries=0) as client:
        model = OpenAIChatModel("helper", provider=OpenAIProvider(openai_client=client))
        result = await pydantic_ai.Agent(model, output_type=output).run("file a ticket")
        return result.output


async def test_native_output_gets_the_clients_type(serve: Serve) -> None:
    provider = ScriptedProvider('{"title": "Printer jam", "priority": 2}')
    served = serve(provider)
    output = await _run(served.url("/v1"), pydantic_ai.NativeOutput(Ticket))
    assert output == Ticket(title="Printer jam", priority=2)
    asked = provider.requests[0].output
    assert asked is not None
    assert asked.strict


async def test_prompted_output_gets_the_clients_type(serve: Serve) -> None:
    provider = ScriptedProvider('{"title": "Printer jam", "priority": 2}')
    served = serve(provider)
    output = await _run(served.url("/v1"), pydantic_ai.PromptedOutput(Ticket))
    assert output == Ticket(title="Printer jam", priority=2)
