"""Later recall pages continue the walk instead of redoing it, and give
exactly the order of the one-statement walk, on a graph with cycles, a hub and events."""

from __future__ import annotations

import random
from typing import Any

import pytest

from memory.contexts import create_context
from memory.recall import walk as walk_module
from memory.recall.graph import recall
from memory.recall.rows import first_walk
from memory.shapes.recall import RecallJson
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction

FRAMES = 600


@pytest.fixture
def tangled(db: Any) -> Any:
    """FRAMES frames citing earlier frames and events, relations in both directions (so
    cycles), and a hub related to a third of the frames."""
    context = create_context("tangled", capacity_tokens=50_000_000)
    rng = random.Random(16)
    seqs = [
        append_event(context.pk, kind="tool_result", content=f"log {i}").event.seq
        for i in range(30)
    ]
    ops: list[dict[str, Any]] = []
    for i in range(FRAMES):
        sources = [f"n{rng.randrange(i)}" for _ in range(min(i, rng.randrange(3)))]
        if rng.random() < 0.2:
            sources.append(f"@e{rng.choice(seqs)}")
        ops.append(
            {
                "op": "derive",
                "id": f"n{i}",
                "from": list(dict.fromkeys(sources)),
                "body": {"i": str(i)},
            }
        )
    for i in range(FRAMES):
        for _ in range(2):
            ops.append(
                {
                    "op": "relate",
                    "subject": f"n{i}",
                    "name": "supports",
                    "object": f"n{rng.randrange(FRAMES)}",
                }
            )
    for i in range(0, FRAMES, 3):
        ops.append({"op": "relate", "subject": "n0", "name": "hub", "object": f"n{i}"})
        ops.append({"op": "relate", "subject": f"n{i}", "name": "back", "object": "n0"})
    ops = [op for op in ops if op["op"] != "relate" or op["subject"] != op["object"]]
    unique: dict[tuple[str, str, str], dict[str, Any]] = {}
    for op in ops:
        key = (op.get("subject", op.get("id")), op.get("name", ""), op.get("object", ""))
        unique.setdefault(key, op)
    ops = list(unique.values())
    for start in range(0, len(ops), 500):
        submit_transaction(
            context.pk,
            data={"base_version": None, "reason": "graph", "ops": ops[start : start + 500]},
        )
    return context


def keys_of(pages: list[dict[str, Any]]) -> list[str]:
    return [n.get("id") or n["ref"] for p in pages for n in p["nodes"]]


def paged(context: Any, forget: bool, **params: Any) -> list[RecallJson]:
    pages = [recall(context, **params)]
    while pages[-1]["next_cursor"]:
        if forget:
            walk_module.forget_all()  # the walk is not kept here: walked again, same pages
        pages.append(recall(context, cursor=pages[-1]["next_cursor"], **params))
    return pages


@pytest.mark.parametrize("direction", ["ancestors", "descendants", "both"])
def test_pages_follow_the_one_statement_walk_exactly(tangled: Any, direction: str) -> None:
    root = "n0" if direction != "ancestors" else f"n{FRAMES - 1}"
    whole = first_walk(tangled.pk, root, direction, 4, 0, 5000, False, False, 64 * 1024)
    expected = [(walk_module_key(whole, key)) for key in whole.order]
    for forget in (False, True):
        walk_module.forget_all()
        pages = paged(
            tangled,
            forget,
            frame_id=root,
            depth=4,
            direction=direction,
            max_nodes=50,
            include_bodies=False,
        )
        assert keys_of(pages) == expected
        depths = [n["depth"] for p in pages for n in p["nodes"]]
        assert depths == sorted(depths)


def walk_module_key(whole: Any, key: tuple[str, int]) -> str:
    return whole.frame_id[key[1]] if key[0] == "f" else f"@e{key[1]}"


def test_a_late_page_does_not_walk_again_from_the_start(
    tangled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = {"frame_id": "n0", "depth": 4, "direction": "both", "max_nodes": 40}
    params["include_bodies"] = False
    expanded: list[tuple[str, int]] = []
    expand = walk_module.WalkState._expand

    def counting(self: Any, context_pk: int, parents: list[tuple[str, int]]) -> None:
        expanded.extend(parents)
        expand(self, context_pk, parents)

    monkeypatch.setattr(walk_module.WalkState, "_expand", counting)
    walk_module.forget_all()
    pages = paged(tangled, False, **params)
    assert len(pages) >= 10
    # Over all the pages, each node was expanded once: no page walked again from the root.
    assert len(expanded) == len(set(expanded))
    nodes = [n for p in pages for n in p["nodes"]]
    assert len(expanded) == sum(1 for n in nodes if n["type"] == "frame" and n["depth"] < 4)
