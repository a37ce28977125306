"""Threads and runs have an owner (schema version 3): a store asked for one owner's finds
nothing of another's; what was recorded before version 3 is nobody's."""

from __future__ import annotations

import pytest

from bloge import AgentDslCompiler, LlmChatOperator, OperatorRegistry, agent_operator
from bloge.core.context import OperatorContext, Principal
from bloge.llm import ScriptedProvider
from bloge.store import Store, StoreNotFoundError, open_store
from bloge.store.sql import schema
from tests.store.test_autopilot_records import _tamper

AGENT = 'agent helper { model = "gpt-4o" }'


def helper(store: Store, *answers: str) -> object:
    registry = (OperatorRegistry.builder()
                .register("llmChat", LlmChatOperator(ScriptedProvider(*answers))).build())
    [definition] = AgentDslCompiler(registry).compile_all(AGENT)
    return agent_operator("helper", definition, registry, store=store)


def as_principal(name: str, *, admin: bool = False) -> OperatorContext:
    return OperatorContext.root(principal=Principal(name, admin=admin))


async def test_a_run_and_its_thread_are_found_for_their_owner_only(store: Store) -> None:
    operator = helper(store, "Hi.")
    output = await operator.aexecute("Hi", as_principal("key:alice"),  # type: ignore[attr-defined]  # an AgentLoopOperator
                                     thread_id="customer-42")
    assert (await store.get_run(output.run_id, owner="key:alice")).id == output.run_id
    assert (await store.get_thread("customer-42", owner="key:alice")).id == "customer-42"
    assert (await store.get_run(output.run_id)).id == output.run_id  # no owner: an admin's view
    with pytest.raises(StoreNotFoundError, match=f"no run '{output.run_id}'"):
        await store.get_run(output.run_id, owner="key:bob")
    with pytest.raises(StoreNotFoundError, match="no thread 'customer-42'"):
        await store.thread_messages("customer-42", owner="key:bob")
    with pytest.raises(StoreNotFoundError):
        await store.cancel_run(output.run_id, owner="key:bob")


async def test_a_run_for_another_principal_does_not_join_the_thread(store: Store) -> None:
    await helper(store, "Hi.").aexecute("Hi", as_principal("key:alice"),  # type: ignore[attr-defined]  # an AgentLoopOperator
                                        thread_id="customer-42")
    with pytest.raises(StoreNotFoundError, match="no thread 'customer-42'"):
        await helper(store, "Hello.").aexecute("Hi", as_principal("key:bob"),  # type: ignore[attr-defined]  # an AgentLoopOperator
                                               thread_id="customer-42")
    assert (await store.get_thread("customer-42")).message_count == 2  # Bob's wrote nothing
    admin = await helper(store, "Hello.").aexecute(  # type: ignore[attr-defined]  # an AgentLoopOperator
        "Hi", as_principal("key:root", admin=True), thread_id="customer-42")
    assert admin.thread_id == "customer-42"


async def test_a_version_2_database_migrates_and_its_rows_are_nobodys(
        durable_store_url: str) -> None:
    for statement in [*schema.MIGRATIONS[0], *schema.MIGRATIONS[1],
                      "CREATE TABLE bloge_schema (version BIGINT NOT NULL)",
                      "INSERT INTO bloge_schema (version) VALUES (2)",
                      ("INSERT INTO bloge_threads (id, created_at, updated_at) "
                      "VALUES ('old', 1, 1)"),
                      ("INSERT INTO bloge_runs (id, thread_id, agent_id, status, input, usage, "
                      "created_at, updated_at) VALUES ('r1', 'old', 'helper', 'succeeded', "
                      "'[]', '{}', 1, 1)")]:
        await _tamper(durable_store_url, statement)
    store = open_store(durable_store_url)
    try:
        assert await store.migrate() == (2, schema.VERSION)
        assert (await store.get_run("r1")).thread_id == "old"
        with pytest.raises(StoreNotFoundError):
            await store.get_run("r1", owner="key:alice")
        with pytest.raises(StoreNotFoundError):
            await helper(store, "Hi.").aexecute("Hi", as_principal("key:alice"),  # type: ignore[attr-defined]  # an AgentLoopOperator
                                                thread_id="old")
    finally:
        await store.aclose()
