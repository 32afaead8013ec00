"""MCP list tools are bounded and paged (issue 35 item 8): `frames` and `read_graph` answer
at most about 1 MB each, however large the context, and their cursors reach every item
once; `limit` asks for fewer."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from morphz_client.mcp_names import entity_frame_id, relation_name

BIG = "x" * 300_000  # a frame of about 300 KB: three or four fit a 1 MB answer


def _load(mz: Any) -> list[str]:
    """Nine large native frames and 40 entities of 40 KB each (1.6 MB), related in a ring."""
    mz.submit(ops=[{"op": "derive", "id": f"big-{i}", "body": {"text": BIG}} for i in range(9)])
    names = [f"Entity {i}" for i in range(40)]
    entities = [
        {"name": n, "entityType": "thing", "observations": [f"{n} " + "y" * 40_000]} for n in names
    ]
    mz.submit(ops=[{"op": "derive", "id": entity_frame_id(e["name"]), "body": e} for e in entities])
    ring = [
        {
            "op": "relate",
            "subject": entity_frame_id(names[i]),
            "name": relation_name("next"),
            "object": entity_frame_id(names[(i + 1) % len(names)]),
        }
        for i in range(len(names))
    ]
    mz.submit(ops=ring)
    return names


async def _walk(client: Any, tool: str, args: dict[str, Any], key: str) -> list[dict[str, Any]]:
    pages = []
    cursor = None
    while True:
        result = await client.call_tool(tool, {**args, **({"cursor": cursor} if cursor else {})})
        assert not result.is_error, result.content
        text = result.content[0].text
        assert len(text) < 1_100_000, len(text)
        page = json.loads(text)
        pages.append(page)
        cursor = page[key]
        if cursor is None:
            return pages


def test_frames_and_read_graph_come_in_bounded_pages(make_client: Any) -> None:
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    mz = make_client("mcp-paged")
    names = _load(mz)
    current_client.set(mz)

    async def run() -> dict[str, list[dict[str, Any]]]:
        async with Client(build_server()) as client:
            return {
                "frames": await _walk(client, "frames", {}, "next_cursor"),
                "two": await _walk(client, "frames", {"limit": 2}, "next_cursor"),
                "graph": await _walk(client, "read_graph", {}, "nextCursor"),
                "ten": await _walk(client, "read_graph", {"limit": 10}, "nextCursor"),
            }

    got = asyncio.run(run())
    ids = [f["id"] for page in got["frames"] for f in page["frames"]]
    assert len(ids) == len(set(ids)) == 49 and len(got["frames"]) > 3
    assert all(len(p["frames"]) <= 2 for p in got["two"]) and len(got["two"]) == 25
    assert len(got["graph"]) >= 2
    assert sorted(e["name"] for p in got["graph"] for e in p["entities"]) == sorted(names)
    relations = [r for page in got["graph"] for r in page["relations"]]
    assert len(relations) == 40 and {r["relationType"] for r in relations} == {"next"}
    assert [len(p["entities"]) for p in got["ten"]] == [10, 10, 10, 10]
