"""The MCP `search` tool pages with the API's cursor (every match once, past any first page)
and tells a model what the REST hit tells it: which live frame supersedes a hit, and which
of the query's content words a hit lacks."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from memory.search.indexer import drain


def _drain() -> None:
    from django.db import connection

    try:
        drain()
    finally:
        connection.close()


async def _search(client: Any, **args: Any) -> dict[str, Any]:
    result = await client.call_tool("search", args)
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert not result.is_error, text
    found: dict[str, Any] = json.loads(text)
    return found


def test_search_pages_by_cursor_and_names_successors(make_client: Any) -> None:
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    mz = make_client("mcp-search-pages")
    mz.append_events([{"kind": "tool_result", "content": f"deploy log {n}"} for n in range(23)])
    mz.submit(
        "(context-tx (derive home-berlin (city Berlin) (note user lives in Berlin))"
        " (derive home-munich (city Munich) (note user lives in Munich now))"
        " (relate home-munich supersedes home-berlin))"
    )

    async def run() -> None:
        current_client.set(mz)
        async with Client(build_server()) as client:
            await asyncio.to_thread(_drain)
            refs: list[str] = []
            page = await _search(client, q="deploy log", limit=10)
            pages = 1
            while page["next_cursor"]:
                refs += [hit["ref"] for hit in page["hits"]]
                page = await _search(client, q="deploy log", limit=10, cursor=page["next_cursor"])
                pages += 1
            refs += [hit["ref"] for hit in page["hits"]]
            assert pages == 3 and len(refs) == 23 and len(set(refs)) == 23
            assert page["total"] == 23

            hits = (await _search(client, q="user lives in Berlin"))["hits"]
            berlin = next(hit for hit in hits if hit["ref"] == "home-berlin")
            assert berlin["superseded_by"] == ["home-munich"]
            munich = next(hit for hit in hits if hit["ref"] == "home-munich")
            assert "superseded_by" not in munich and munich["coverage"]["missing"] == ["berlin"]

    asyncio.run(run())


def test_search_says_whether_its_total_is_exact(make_client: Any) -> None:
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    # More matches than `total` counts (1,000): it is a floor, and the model must be told so
    # rather than read "total: 1000" as every match there is.
    mz = make_client("mcp-search-total")
    for start in (0, 600):
        mz.append_events(
            [
                {"kind": "tool_result", "content": f"deploy log {n}"}
                for n in range(start, start + 600)
            ]
        )

    async def run() -> None:
        current_client.set(mz)
        async with Client(build_server()) as client:
            await asyncio.to_thread(_drain)
            many = await _search(client, q="deploy", limit=5)
            assert many["total"] == 1000 and many["total_exact"] is False
            one = await _search(client, q="1199", limit=5)
            assert one["total"] == 1 and one["total_exact"] is True

    asyncio.run(run())
