"""An import puts each rejected transaction back between the commits it was recorded
between (`after_version` in its export line): the transaction list, oldest first, reads
as it did on the exported context. A file without `after_version` (older exports) has its
rejected records after the last commit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context
from memory.errors import MorphzError
from memory.models import Context, TransactionRecord
from memory.tx.engine import submit_transaction
from memory.versions.exchange import export_context, import_context
from tests.memory.versions.test_an_import_refuses_times_it_cannot_store import _unsigned
from tests.memory.versions.test_export_import import _lines


def _rejected(context: Context, n: int) -> None:
    with pytest.raises(MorphzError):
        submit_transaction(context.pk, text=f"(context-tx (revise missing-{n} (goal x)))")


@pytest.fixture
def mixed(db: Any) -> Context:
    """Rejected, commit, rejected, rejected, commit, rejected."""
    context = create_context("mixed")
    _rejected(context, 1)
    submit_transaction(context.pk, text="(context-tx (derive first (goal a)))")
    _rejected(context, 2)
    _rejected(context, 3)
    submit_transaction(context.pk, text="(context-tx (derive second (goal b)))")
    _rejected(context, 4)
    return context


def _order(context: Context) -> list[str]:
    return [
        f"{status}:{text.split('(')[2].split()[1]}"
        for status, text in TransactionRecord.objects.filter(context=context)
        .order_by("pk")
        .values_list("status", "text")
    ]


def test_the_imported_list_reads_as_the_exported_one(mixed: Context, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl.gz"
    export_context(mixed, path)
    copy = import_context(path, slug="mixed-copy").context
    assert _order(copy) == _order(mixed)
    assert [s.split(":")[0] for s in _order(copy)] == [
        "rejected",
        "committed",
        "rejected",
        "rejected",
        "committed",
        "rejected",
    ]


def test_a_file_without_after_version_keeps_them_after_the_commits(
    mixed: Context, tmp_path: Path
) -> None:
    path = tmp_path / "mixed.jsonl.gz"
    export_context(mixed, path)
    lines = [json.loads(line) for line in _lines(path)[:-1]]
    for line in lines:
        line.pop("after_version", None)
    copy = import_context(_unsigned(lines, tmp_path), slug="old", allow_unverified=True).context
    assert [s.split(":")[0] for s in _order(copy)] == ["committed"] * 2 + ["rejected"] * 4
