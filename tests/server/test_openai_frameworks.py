"""The agent frameworks users point at ``bloge serve``, unchanged, with tools of their own:
Pydantic AI with an ``output_type`` (a final-result tool), LangChain's ``bind_tools``, OpenAI
Agents with a function tool. A real ``bloge serve`` on 127.0.0.1 serves the repository's
application on the offline model, which calls a client's tool by matching its words."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator

import agents
import httpx
import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from tests.cli.conftest import REPO
from tests.server.test_serve_command import serving

QUESTION = "What is the weather in Paris?"


@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The ``/v1`` URL of ``bloge serve`` on a copy of the repository's application."""
    project = tmp_path_factory.mktemp("app")
    shutil.copy(REPO / "settings.yaml", project / "settings.yaml")
    shutil.copytree(REPO / "examples", project / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    with serving(project) as url:
        yield f"{url}/v1"


def status_of(v1: str, completion_id: str) -> str:
    run = httpx.get(v1.removesuffix("/v1") + "/runs/" + completion_id.removeprefix("chatcmpl-"))
    status: str = run.json()["status"]
    return status


class Forecast(BaseModel):
    city: str


def test_pydantic_ai_gets_its_output_type_through_its_final_result_tool(v1: str) -> None:

    async def ask() -> Forecast:
        async with AsyncOpenAI(base_url=v1, api_key="none") as client:
            model = OpenAIChatModel("customerSupport",
                                    provider=OpenAIProvider(openai_client=client))
            return (await Agent(model, output_type=Forecast).run(QUESTION)).output

    output = asyncio.run(ask())
    # The agent's own tool ran on the server; its answer came back through final_result.
    assert isinstance(output, Forecast)
    assert output.city


def test_langchain_bind_tools_calls_the_tool_and_answers_from_its_result(v1: str) -> None:

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    with httpx.Client() as http:
        model = ChatOpenAI(model="customerSupport", base_url=v1, api_key="none",
                           http_client=http).bind_tools([get_weather])
        messages: list = [HumanMessage(QUESTION)]
        asked = model.invoke(messages)
        [call] = asked.tool_calls
        assert call["name"] == "get_weather"
        messages += [asked, ToolMessage(get_weather.invoke(call["args"]),
                                        tool_call_id=call["id"])]
        answer = model.invoke(messages)
    assert "Sunny in" in answer.content
    completion_id = asked.response_metadata["id"]
    assert answer.response_metadata["id"] == completion_id  # the same run, continued
    assert status_of(v1, completion_id) == "succeeded"


def test_langchain_streams_the_tool_call(v1: str) -> None:

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    gathered = None
    with httpx.Client() as http:
        model = ChatOpenAI(model="customerSupport", base_url=v1, api_key="none",
                           http_client=http, streaming=True).bind_tools([get_weather])
        for chunk in model.stream(QUESTION):
            gathered = chunk if gathered is None else gathered + chunk
    assert gathered is not None
    assert [call["name"] for call in gathered.tool_calls] == ["get_weather"]


def test_openai_agents_runs_its_function_tool_and_answers(v1: str) -> None:

    agents.set_tracing_disabled(True)  # no export to OpenAI's servers
    ran: list[str] = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return f"Sunny in {city}"

    async def ask() -> str:
        async with AsyncOpenAI(base_url=v1, api_key="none") as client:
            model = agents.OpenAIChatCompletionsModel(model="customerSupport",
                                                      openai_client=client)
            agent = agents.Agent(name="weather", model=model, tools=[get_weather])
            return str((await agents.Runner.run(agent, QUESTION)).final_output)

    answer = asyncio.run(ask())
    assert ran == [QUESTION]
    assert "Sunny in" in answer
