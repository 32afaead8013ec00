"""An import's times (events' `created_at`, tombstones' `erased_at`) are read like every
time from outside (`memory.times.read_time`): one that is no ISO 8601 time with its offset,
or falls outside the times that can be stored once in UTC, is InvalidExport naming it, and
nothing is written; PostgreSQL never sees it (nor reads `now` or a date alone its own way)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context
from memory.models import Context, Event
from memory.tx.engine import submit_transaction
from memory.versions.exchange import InvalidExport, export_context, import_context
from tests.memory.versions.test_export_import import _lines, _write

BAD_TIMES = ["9999-12-31T23:59:59.999999-23:59", "0001-01-01T00:00:00+23:59", "now", "2020-01-01"]


@pytest.fixture
def lines(db: Any, tmp_path: Path) -> list[dict[str, Any]]:
    """An exported context's lines, the closing one left off (`_unsigned` writes one)."""
    context = create_context("timed")
    submit_transaction(context.pk, text="(context-tx (derive release (goal ship)))")
    path = tmp_path / "timed.jsonl.gz"
    export_context(context, path)
    return [json.loads(line) for line in _lines(path)[:-1]]


def _unsigned(lines: list[dict[str, Any]], tmp_path: Path) -> Path:
    raw = [(json.dumps(line, ensure_ascii=False) + "\n").encode() for line in lines]
    digest = hashlib.sha256(b"".join(raw)).hexdigest()
    raw.append((json.dumps({"type": "end", "lines": len(raw), "sha256": digest}) + "\n").encode())
    path = tmp_path / "edited.jsonl.gz"
    _write(path, raw)
    return path


def _first_event(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The step of event 1 (here the transaction's own event)."""
    return next(line for line in lines if line.get("seq") == 1)


@pytest.mark.parametrize("time", BAD_TIMES)
def test_an_event_time_that_cannot_be_stored_is_refused_naming_it(
    lines: list[dict[str, Any]], tmp_path: Path, time: str
) -> None:
    _first_event(lines)["created_at"] = time
    with pytest.raises(InvalidExport) as caught:
        import_context(_unsigned(lines, tmp_path), slug="copy", allow_unverified=True)
    assert "created_at of event 1" in caught.value.message
    assert not Context.objects.filter(slug="copy").exists()


@pytest.mark.parametrize("time", BAD_TIMES)
def test_a_tombstone_time_that_cannot_be_stored_is_refused_naming_it(
    lines: list[dict[str, Any]], tmp_path: Path, time: str
) -> None:
    tombstone = {
        "type": "erasure",
        **{"request": "r1", "target": "event", "ref": "@e1", "matches": 1},
        **{"reason": "test", "erased_by": "ops", "erased_at": time},
    }
    lines.insert(-1, tombstone)  # before the state line
    with pytest.raises(InvalidExport) as caught:
        import_context(_unsigned(lines, tmp_path), slug="copy", allow_unverified=True)
    assert "erased_at of erasure 1" in caught.value.message
    assert not Context.objects.filter(slug="copy").exists()


def test_an_offset_postgresql_cannot_take_is_read_as_its_instant(
    lines: list[dict[str, Any]], tmp_path: Path
) -> None:
    _first_event(lines)["created_at"] = "2020-01-01T20:00:00+20:00"
    copy = import_context(_unsigned(lines, tmp_path), slug="copy", allow_unverified=True)
    created = Event.objects.get(context=copy.context, seq=1).created_at
    assert created.isoformat() == "2020-01-01T00:00:00+00:00"
