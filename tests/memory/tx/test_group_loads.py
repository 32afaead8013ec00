"""A group commit's loads are sent before any of its transactions is decided
(memory.tx.preload): a load is used as sent unless a transaction written after it was sent
changed something it names; then it is loaded again and sees that write."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction

from memory.contexts import create_context
from memory.hotsql import pipeline
from memory.models import Context
from memory.tx.apply import ApplyOutcome
from memory.tx.engine import submit_transaction
from memory.tx.loader import SqlLoader
from memory.tx.preload import GroupLoads, Names

OPS = [{"op": "revise", "id": "release", "body": {"goal": "x"}}]


@pytest.fixture
def context(db) -> Context:
    made = create_context("preloaded")
    submit_transaction(made.pk, text="(context-tx (derive release (goal ship-v1)))")
    submit_transaction(made.pk, text="(context-tx (derive notes (n 1)))")
    return made


def change_behind_the_loads(context: Context) -> None:
    """A revision of `release` the loads are not told about: only a fresh load sees it."""
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE memory_frame SET revision = 7 WHERE context_id = %s AND frame_id = 'release'",
            [context.pk],
        )


def outcome_touching(context: Context, frame_ids: set[str]) -> ApplyOutcome:
    frames, _, _ = SqlLoader(context.pk).load(frame_ids, set(), set())
    return ApplyOutcome(frames=frames, events={}, relations={}, results=[], errors=[])


def revision_loaded(context: Context, touched_since: set[str] | None) -> int:
    key = object()
    with transaction.atomic(), pipeline():
        loads = GroupLoads(context.pk)
        loads.send(key, OPS)
        change_behind_the_loads(context)
        if touched_since is not None:
            loads.wrote(outcome_touching(context, touched_since), transaction_seq=99)
        frames, _, _ = loads.load(key, Names.of(OPS))
        transaction.set_rollback(True)
    return frames["release"].revision


def test_a_load_nothing_written_since_overlaps_is_used_as_sent(context):
    assert revision_loaded(context, None) == 1
    assert revision_loaded(context, {"notes"}) == 1


def test_a_load_a_later_write_overlaps_is_loaded_again(context):
    assert revision_loaded(context, {"release"}) == 7


def test_a_load_naming_the_seq_a_later_transaction_took_is_loaded_again(context):
    key = object()
    ops = [{"op": "retire", "refs": ["@e9"]}]
    with transaction.atomic(), pipeline():
        loads = GroupLoads(context.pk)
        loads.send(key, ops)
        loads.wrote(outcome_touching(context, set()), transaction_seq=9)
        calls: list[object] = []
        original = loads.loader.load

        def load_counted(*args: Any) -> Any:
            calls.append(args)
            return original(*args)

        loads.loader.load = load_counted  # type: ignore[method-assign,assignment]
        loads.load(key, Names.of(ops))
        transaction.set_rollback(True)
    assert calls == [(set(), {9}, set())]
