"""A bulk append is its items appended one by one, atomically (R50): when it puts the
context into maintenance, the maintenance log names the event that crossed the threshold,
as a single append would, and replay (R51) and export/import (R56) explain the history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context
from memory.models import Context, Event, MaintenanceChange
from memory.timeline.bulk import append_events
from memory.timeline.events import append_event
from memory.versions.exchange import export_context, import_context
from memory.versions.replay import verify_context

OBSERVATION = "word " * 150  # a 1000-token context enters maintenance at the 5th


def _log(context: Context) -> list[tuple[int, int, bool]]:
    return list(
        MaintenanceChange.objects.filter(context=context)
        .order_by("id")
        .values_list("version", "last_seq", "in_maintenance")
    )


def _first_seq_at_maintenance(context: Context) -> int:
    """The seq of the observation that brings usage to the maintenance threshold."""
    used = 0
    for seq, tokens in (
        Event.objects.filter(context=context, is_observation=True)
        .order_by("seq")
        .values_list("seq", "token_estimate")
    ):
        used += tokens
        if 100 * used >= context.maintenance_percent * context.capacity_tokens:
            return int(seq)
    raise AssertionError("never reached maintenance")


def _items(count: int) -> list[dict[str, Any]]:
    return [{"kind": "tool_result", "content": f"{OBSERVATION}{i}"} for i in range(count)]


@pytest.mark.parametrize(
    ("before", "batch"),
    [
        (0, 10),  # crosses mid-batch
        (4, 6),  # crosses at the batch's first item
        (2, 3),  # crosses at the batch's last item
    ],
)
def test_bulk_append_records_maintenance_at_the_crossing_event(
    db: Any, before: int, batch: int
) -> None:
    bulk = create_context("hb", capacity_tokens=1000)
    single = create_context("hs", capacity_tokens=1000)
    items = _items(before + batch)
    for item in items[:before]:
        append_event(bulk.pk, **item)
    append_events(bulk.pk, items[before:])
    for item in items:
        append_event(single.pk, **item)
    bulk.refresh_from_db()
    single.refresh_from_db()

    assert bulk.in_maintenance and single.in_maintenance
    assert (bulk.last_seq, bulk.used_tokens) == (single.last_seq, single.used_tokens)
    assert _log(bulk) == _log(single)
    [(_, crossing, entered)] = _log(bulk)
    assert entered and crossing == _first_seq_at_maintenance(bulk)
    assert verify_context(bulk) == []


def test_bulk_append_into_maintenance_exports_and_imports(db: Any, tmp_path: Path) -> None:
    context = create_context("hb", capacity_tokens=1000)
    append_events(context.pk, _items(10))
    context.refresh_from_db()
    path = tmp_path / "hb.jsonl.gz"
    export_context(context, path)
    result = import_context(path, slug="hb-copy")
    copy = Context.objects.get(slug="hb-copy")
    assert result is not None
    assert _log(copy) == _log(context)
