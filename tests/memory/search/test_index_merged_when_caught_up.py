"""When the indexer has caught up, the word index holds no pending entries: PostgreSQL's GIN
index appends new entries to a pending list that every search reads whole (and that made
the planner read every document instead: search p50 75 ms against 11.8 ms once merged),
so the indexer merges it each time the outbox empties, in `drain` and in `run_forever`."""

from __future__ import annotations

import time
from typing import Any

from django.db import connection

from memory.contexts import create_context
from memory.models import IndexIntent
from memory.search import indexer
from memory.timeline.bulk import append_events
from tests.memory.conftest import running_indexer


def pending_pages() -> int:
    """Pages still pending in the word index (merging them is how to count them)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT gin_clean_pending_list('search_tokens_gin'::regclass)")
        return int(cursor.fetchone()[0])


def many_events(slug: str) -> int:
    context = create_context(slug, capacity_tokens=50_000_000)
    items = [
        {"kind": "tool_result", "content": f"step {i}: cancel_order refund {i * 7919} ok"}
        for i in range(400)
    ]
    append_events(context.pk, items)
    return context.pk


def test_drain_leaves_no_pending_entries(db: Any) -> None:
    many_events("drained")
    assert indexer.drain() == 400
    assert pending_pages() == 0


def test_without_the_merge_entries_stay_pending(db: Any) -> None:
    many_events("unmerged")
    while indexer.apply_pending():  # batches alone, as before the merge
        pass
    assert pending_pages() > 0  # what drain and run_forever now merge


def test_the_worker_merges_once_the_outbox_is_empty(transactional_db: Any) -> None:
    many_events("worked")
    with running_indexer() as wait_until:
        wait_until(lambda: not IndexIntent.objects.exists())
        time.sleep(1.0)  # the worker merges at its first empty poll (every 0.05 s)
    assert not IndexIntent.objects.exists()
    assert pending_pages() == 0


def test_a_fork_leaves_no_pending_entries(db: Any) -> None:
    from memory.models import Context
    from memory.versions.forks import fork_context

    source = many_events("forked-from")
    indexer.drain()
    fork_context(Context.objects.get(pk=source), slug="forked")  # copies documents by SQL
    assert pending_pages() == 0
