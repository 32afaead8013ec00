"""The reference tools keep the reference's semantics (R66): each case from issue 29 runs on
the real reference server and on Morphz's, and both answer the same."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.agents.mcp_reference import outcome, reference_client, text_of

PEOPLE = [
    {"name": "C#", "entityType": "language", "observations": ["by Microsoft"]},
    {"name": "C++", "entityType": "language", "observations": ["by Stroustrup"]},
    {"name": "Zoé", "entityType": "person", "observations": ["likes jazz"]},
    {"name": "Zoë", "entityType": "person", "observations": ["likes rock"]},
    {"name": "苹果", "entityType": "水果", "observations": ["红色"]},
]


def _run(make_client: Any, tmp_path: Path, steps: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each step on both servers; every answer must match. Returns Morphz's outcomes."""
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    mz = make_client("mcp-cases")

    async def run() -> list[Any]:
        current_client.set(mz)
        outcomes = []
        async with (
            reference_client(tmp_path / "memory.jsonl") as ref,
            Client(build_server()) as ours,
        ):
            for name, args in steps:
                theirs = outcome(await ref.call_tool(name, args))
                mine_raw = await ours.call_tool(name, args)
                mine = outcome(mine_raw)
                assert mine == theirs, (name, args, text_of(mine_raw))
                outcomes.append(mine)
        return outcomes

    return asyncio.run(run())


def test_names_are_kept_exactly(make_client: Any, tmp_path: Path) -> None:
    out = _run(
        make_client,
        tmp_path,
        [
            ("create_entities", {"entities": PEOPLE}),
            ("add_observations", {"observations": [{"entityName": "C#", "contents": [".NET"]}]}),
            ("open_nodes", {"names": ["Zoé"]}),
            ("open_nodes", {"names": ["苹果"]}),
            ("delete_entities", {"entityNames": ["C#"]}),
            ("read_graph", {}),
        ],
    )
    assert [e["name"] for e in out[2][1]["entities"]] == ["Zoé"]
    graph = out[-1][1]
    assert sorted(e["name"] for e in graph["entities"]) == ["C++", "Zoé", "Zoë", "苹果"]
    assert next(e for e in graph["entities"] if e["name"] == "C++")["observations"] == [
        "by Stroustrup"
    ]


def test_deleted_is_gone_from_every_read_and_can_come_back(
    make_client: Any, tmp_path: Path
) -> None:
    ann = {"name": "Ann", "entityType": "person", "observations": ["pilot"]}
    bob = {"name": "Bob", "entityType": "person", "observations": []}
    out = _run(
        make_client,
        tmp_path,
        [
            ("create_entities", {"entities": [ann, bob]}),
            (
                "create_relations",
                {"relations": [{"from": "Ann", "to": "Bob", "relationType": "knows"}]},
            ),
            ("delete_entities", {"entityNames": ["Ann"]}),
            ("read_graph", {}),
            ("search_nodes", {"query": "pilot"}),
            ("open_nodes", {"names": ["Ann", "Bob"]}),
            ("add_observations", {"observations": [{"entityName": "Ann", "contents": ["x"]}]}),
            ("create_entities", {"entities": [{**ann, "observations": ["astronaut"]}]}),
            ("read_graph", {}),
        ],
    )
    assert out[3][1] == {"entities": [bob], "relations": []}
    assert out[4][1] == {"entities": [], "relations": []}
    assert out[6][0] is True  # no entity Ann to add to
    assert out[7][1][0]["observations"] == ["astronaut"]
    # The old relation did not come back with the name.
    assert out[8][1]["relations"] == []


def test_open_and_search_return_every_relation_touching_a_node(
    make_client: Any, tmp_path: Path
) -> None:
    out = _run(
        make_client,
        tmp_path,
        [
            ("create_entities", {"entities": PEOPLE[:3]}),
            (
                "create_relations",
                {
                    "relations": [
                        {"from": "C#", "to": "C++", "relationType": "inspired by"},
                        {"from": "Zoé", "to": "C#", "relationType": "WRITES"},
                    ]
                },
            ),
            ("open_nodes", {"names": ["C#"]}),
            ("search_nodes", {"query": "microsoft"}),
            ("open_nodes", {"names": ["C++"]}),
        ],
    )
    assert len(out[2][1]["relations"]) == 2 and len(out[3][1]["relations"]) == 2
    assert out[4][1]["relations"] == [{"from": "C#", "to": "C++", "relationType": "inspired by"}]


def test_a_string_where_a_list_belongs_is_refused(make_client: Any, tmp_path: Path) -> None:
    out = _run(
        make_client,
        tmp_path,
        [
            (
                "create_entities",
                {
                    "entities": [
                        {"name": "Ann", "entityType": "person", "observations": "likes jazz"}
                    ]
                },
            ),
            (
                "create_entities",
                {"entities": '[{"name": "Ann", "entityType": "p", "observations": []}]'},
            ),
            ("create_entities", {"entities": [{"name": 7, "entityType": "p", "observations": []}]}),
            ("create_entities", {"entities": [{"name": "Ann", "observations": []}]}),
            ("open_nodes", {"names": "Ann"}),
            ("read_graph", {}),
        ],
    )
    assert [o[0] for o in out] == [True, True, True, True, True, False]
    assert out[-1][1] == {"entities": [], "relations": []}


def test_reads_see_the_callers_own_writes(make_client: Any, tmp_path: Path) -> None:
    out = _run(
        make_client,
        tmp_path,
        [
            ("create_entities", {"entities": PEOPLE[2:3]}),
            (
                "add_observations",
                {"observations": [{"entityName": "Zoé", "contents": ["plays oboe"]}]},
            ),
            ("search_nodes", {"query": "OBOE"}),
            (
                "delete_observations",
                {"deletions": [{"entityName": "Zoé", "observations": ["plays oboe"]}]},
            ),
            ("search_nodes", {"query": "oboe"}),
        ],
    )
    assert [e["name"] for e in out[2][1]["entities"]] == ["Zoé"]
    assert out[4][1]["entities"] == []


def test_parallel_observations_on_one_entity_all_land(make_client: Any) -> None:
    """Twelve add_observations at once on one entity: each succeeds (the tool rereads and
    retries on a conflict), and the entity holds all twelve, as the reference's serialised
    calls would leave it."""
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    current_client.set(make_client("mcp-parallel"))

    async def run() -> Any:
        async with Client(build_server()) as ours:
            await ours.call_tool("create_entities", {"entities": [PEOPLE[0]]})
            results = await asyncio.gather(
                *(
                    ours.call_tool(
                        "add_observations",
                        {"observations": [{"entityName": "C#", "contents": [f"fact {i}"]}]},
                    )
                    for i in range(12)
                )
            )
            assert [r.is_error for r in results] == [False] * 12, [text_of(r) for r in results]
            return outcome(await ours.call_tool("open_nodes", {"names": ["C#"]}))

    _, graph = asyncio.run(run())
    (entity,) = graph["entities"]
    assert sorted(entity["observations"]) == sorted(
        ["by Microsoft"] + [f"fact {i}" for i in range(12)]
    )


def test_unknown_fields_are_refused_where_the_reference_drops_them(
    make_client: Any, tmp_path: Path
) -> None:
    """Difference "unknown fields" (docs/agents.md): the reference drops a field its schema
    does not name and creates the entity; Morphz refuses the call, naming the field."""
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    current_client.set(make_client("mcp-unknown-field"))
    args = {"entities": [{**PEOPLE[0], "colour": "blue"}]}

    async def run() -> tuple[Any, Any, Any]:
        async with (
            reference_client(tmp_path / "memory.jsonl") as ref,
            Client(build_server()) as ours,
        ):
            theirs = await ref.call_tool("create_entities", args)
            mine = await ours.call_tool("create_entities", args)
            return theirs, mine, outcome(await ours.call_tool("read_graph", {}))

    theirs, mine, graph = asyncio.run(run())
    assert outcome(theirs) == (False, [PEOPLE[0]])
    assert mine.is_error and "colour" in text_of(mine)
    assert graph == (False, {"entities": [], "relations": []})
