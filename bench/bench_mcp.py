"""Morphz's MCP server beside the reference `server-memory` (npm, pinned), in one run.

    .venv/bin/python bench/bench_mcp.py                 # 1,000 and 10,000 entities
    .venv/bin/python bench/bench_mcp.py --sizes 1000 --calls 100

For each size N: the reference (node, stdio, a fresh memory file) and Morphz (`morphz-mcp`
over stdio against a served app on a fresh context of the bench database) are loaded with
the same N entities (three observations each) and N/2 relations, then both answer the same
seeded sequence of reference-tool calls (create, add/delete observations, relations,
open_nodes, search_nodes, deletes) one at a time; then `search_nodes` alone (a query that
matches a few entities) `--searches` times. Printed per size: calls per second, search_nodes
p50, and Morphz / reference ratios (higher is better for Morphz in both), and the p50 of one
bare REST GET (`context`) to the same server: the floor of any Morphz call, which makes at
least one. The load average is
printed beside them: the machine may be shared.

Loading is not measured: the reference is loaded through its own tool (100 entities per
call); Morphz through its REST API in transactions of 500 frames of the same shape and ids.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_bench_mcp")

from common import ROOT, load_average, new_context, percentile, setup_django

REFERENCE_JS = (
    ROOT / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
)
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
]


def entity(i: int) -> dict[str, Any]:
    return {
        "name": f"Entity {i} ({WORDS[i % len(WORDS)]})",
        "entityType": ["person", "project", "city"][i % 3],
        "observations": [f"fact {i}-{k} about {WORDS[(i + k) % len(WORDS)]}" for k in range(3)],
    }


def sequence(n: int, calls: int, seed: int = 66) -> list[tuple[str, dict[str, Any]]]:
    """A seeded mix of the reference tools over an n-entity graph."""
    rnd = random.Random(seed)
    out: list[tuple[str, dict[str, Any]]] = []
    fresh = n
    for _ in range(calls):
        roll = rnd.random()
        name = entity(rnd.randrange(n))["name"]
        other = entity(rnd.randrange(n))["name"]
        if roll < 0.15:
            out.append(("create_entities", {"entities": [entity(fresh)]}))
            fresh += 1
        elif roll < 0.35:
            item = {"entityName": name, "contents": [f"note {len(out)}"]}
            out.append(("add_observations", {"observations": [item]}))
        elif roll < 0.45:
            item = {"entityName": name, "observations": [f"fact {name}"]}
            out.append(("delete_observations", {"deletions": [item]}))
        elif roll < 0.60:
            rel = {"from": name, "to": other, "relationType": "knows"}
            out.append(("create_relations", {"relations": [rel]}))
        elif roll < 0.80:
            out.append(("open_nodes", {"names": [name, other]}))
        elif roll < 0.95:
            out.append(("search_nodes", {"query": f"fact {rnd.randrange(n)}-1 "}))
        else:
            out.append(("delete_entities", {"entityNames": [name]}))
    return out


def load_morphz(mz: Any, n: int) -> None:
    from morphz_client.mcp_names import entity_frame_id, relation_name

    ops: list[dict[str, Any]] = []
    for i in range(n):
        ops.append({"op": "derive", "id": entity_frame_id(entity(i)["name"]), "body": entity(i)})
        if len(ops) == 500:
            mz.submit(ops=ops)
            ops = []
    for i in range(0, n, 2):
        a, b = entity(i)["name"], entity((i * 7 + 1) % n)["name"]
        if a != b:
            subject, obj = entity_frame_id(a), entity_frame_id(b)
            ops.append(
                {"op": "relate", "subject": subject, "name": relation_name("knows"), "object": obj}
            )
        if len(ops) == 500:
            mz.submit(ops=ops)
            ops = []
    if ops:
        mz.submit(ops=ops)


async def load_reference(client: Any, n: int) -> None:
    for start in range(0, n, 100):
        batch = [entity(i) for i in range(start, min(n, start + 100))]
        await client.call_tool("create_entities", {"entities": batch})
    relations = [
        {"from": entity(i)["name"], "to": entity((i * 7 + 1) % n)["name"], "relationType": "knows"}
        for i in range(0, n, 2)
        if i != (i * 7 + 1) % n
    ]
    for start in range(0, len(relations), 100):
        await client.call_tool("create_relations", {"relations": relations[start : start + 100]})


async def measure(
    client: Any, calls: list[tuple[str, dict[str, Any]]], searches: int
) -> dict[str, float]:
    started = time.perf_counter()
    for name, args in calls:
        # A call naming a deleted entity may be refused (Morphz refuses a relation to it,
        # the reference stores one): timed all the same.
        await client.call_tool(name, args)
    seconds = time.perf_counter() - started
    samples = []
    for k in range(searches):
        began = time.perf_counter()
        await client.call_tool("search_nodes", {"query": f"fact {k * 37}-2 "})
        samples.append((time.perf_counter() - began) * 1000)
    return {"calls_per_s": len(calls) / seconds, "search_p50_ms": percentile(samples, 50)}


def run_size(n: int, calls: int, searches: int, url: str) -> dict[str, dict[str, float]]:
    from mcp import Client, StdioServerParameters
    from morphz_client import MorphzClient

    slug = f"bench-mcp-{n}-{int(time.time())}"
    _, token = new_context(slug, capacity_tokens=2_000_000_000)
    mz = MorphzClient(url, token, context=slug, timeout=300)
    load_morphz(mz, n)
    work = sequence(n, calls)
    memory = Path(tempfile.mkdtemp()) / "memory.jsonl"
    reference = StdioServerParameters(
        command=str(shutil.which("node")),
        args=[str(REFERENCE_JS)],
        env={"MEMORY_FILE_PATH": str(memory)},
    )
    ours = StdioServerParameters(
        command=str(Path(sys.executable).parent / "morphz-mcp"),
        env={**os.environ, "MORPHZ_URL": url, "MORPHZ_TOKEN": token, "MORPHZ_CONTEXT": slug},
    )

    floor = []
    for _ in range(20):
        began = time.perf_counter()
        mz.context()
        floor.append((time.perf_counter() - began) * 1000)

    async def both() -> dict[str, dict[str, float]]:
        async with Client(reference) as ref:
            await load_reference(ref, n)
            theirs = await measure(ref, work, searches)
        async with Client(ours) as client:
            mine = await measure(client, work, searches)
        return {"reference": theirs, "morphz": {**mine, "rest_p50_ms": percentile(floor, 50)}}

    return asyncio.run(both())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--searches", type=int, default=20)
    args = parser.parse_args()
    setup_django()
    from django.db import connection

    from morphz.devserver import database_url, free_port
    from reliability.faults import start_server, stop, wait_until_serving

    port = free_port()
    env = {
        "DATABASE_URL": database_url(connection.settings_dict),
        "MORPHZ_THROTTLE_RATE": "10000000/min",
    }
    server = start_server(port, env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url, server, seconds=120)
        print(f"MCP beside the reference server-memory; {load_average()}")
        print(
            "| entities | reference calls/s | Morphz calls/s | ratio | reference search_nodes "
            "p50 | Morphz search_nodes p50 | ratio | one REST GET p50 |"
        )
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for n in args.sizes:
            got = run_size(n, args.calls, args.searches, url)
            ref, mine = got["reference"], got["morphz"]
            print(
                f"| {n:,} | {ref['calls_per_s']:.1f} | {mine['calls_per_s']:.1f} | "
                f"{mine['calls_per_s'] / ref['calls_per_s']:.2f}x | {ref['search_p50_ms']:.1f} ms | "
                f"{mine['search_p50_ms']:.1f} ms | {ref['search_p50_ms'] / mine['search_p50_ms']:.2f}x | "
                f"{mine['rest_p50_ms']:.1f} ms |",
                flush=True,
            )
        print(f"({load_average()})")
    finally:
        stop(server)


if __name__ == "__main__":
    main()
