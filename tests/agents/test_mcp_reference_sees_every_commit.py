"""The reference tools read a per-process copy of the context brought up to date on every
call (`morphz_client.mcp_snapshot`): a commit made outside the MCP server (REST, another
process) is seen by the very next call, deletes and restores included."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from morphz_client.mcp_names import entity_frame_id, relation_name


def test_commits_from_elsewhere_are_seen_at_once(make_client: Any) -> None:
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    mz = make_client("mcp-copy")
    current_client.set(mz)
    ann = {"name": "Ann", "entityType": "person", "observations": ["pilot"]}
    bob = {"name": "Bob", "entityType": "person", "observations": []}
    ids = {n: entity_frame_id(n) for n in ("Ann", "Bob")}

    async def graph(client: Any, tool: str = "read_graph", **args: Any) -> Any:
        return json.loads((await client.call_tool(tool, args)).content[0].text)

    async def run() -> None:
        async with Client(build_server()) as client:
            assert await graph(client) == {"entities": [], "relations": []}  # the copy is made
            mz.submit(ops=[{"op": "derive", "id": ids["Ann"], "body": ann}])
            mz.submit(ops=[{"op": "derive", "id": ids["Bob"], "body": bob}])
            found = await graph(client, "search_nodes", query="PILOT")
            assert found == {"entities": [ann], "relations": []}
            edge = {"subject": ids["Ann"], "name": relation_name("knows"), "object": ids["Bob"]}
            mz.submit(ops=[{"op": "relate", **edge}])
            knows = {"from": "Ann", "to": "Bob", "relationType": "knows"}
            assert (await graph(client, "open_nodes", names=["Bob"]))["relations"] == [knows]
            revised = {**ann, "observations": ["pilot", "astronaut"]}
            mz.submit(ops=[{"op": "revise", "id": ids["Ann"], "body": revised}])
            mz.submit(ops=[{"op": "retire", "refs": [ids["Bob"]]}])
            assert await graph(client) == {"entities": [revised], "relations": []}
            mz.submit(ops=[{"op": "restore", "ids": [ids["Bob"]]}, {"op": "unrelate", **edge}])
            assert await graph(client) == {"entities": [revised, bob], "relations": []}

    asyncio.run(run())
