"""A commit's idempotency key (R49) survives a fork and an export/import: a client that
retries a transaction against the fork or the restored context gets its first receipt
again, as on the original, and a different request under the key is still refused.
A key or request hash in an import file is checked like one from a client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context
from memory.errors import Conflict
from memory.models import Context
from memory.tx.engine import submit_transaction
from memory.versions.exchange import InvalidExport, export_context, import_context
from memory.versions.forks import fork_context
from tests.memory.versions.test_an_import_refuses_times_it_cannot_store import _unsigned
from tests.memory.versions.test_export_import import _lines

TEXT = "(context-tx (base-version 0) (derive release (goal ship)))"


@pytest.fixture
def keyed(db: Any) -> Context:
    context = create_context("keyed")
    submit_transaction(context.pk, text=TEXT, idempotency_key="k1")
    submit_transaction(context.pk, text="(context-tx (derive later (goal test)))")
    return context


def _retried(context: Context) -> None:
    again = submit_transaction(context.pk, text=TEXT, idempotency_key="k1")
    assert again.replayed and again.receipt["version"] == 1
    with pytest.raises(Conflict) as caught:
        submit_transaction(context.pk, text=TEXT.replace("ship", "sail"), idempotency_key="k1")
    assert caught.value.code == "idempotency_key_reused"


def test_a_retry_on_a_fork_gets_the_first_receipt(keyed: Context) -> None:
    _retried(fork_context(keyed.pk, slug="keyed-fork").context)


def test_a_retry_on_an_imported_context_gets_the_first_receipt(
    keyed: Context, tmp_path: Path
) -> None:
    path = tmp_path / "keyed.jsonl.gz"
    export_context(keyed, path)
    _retried(import_context(path, slug="keyed-copy").context)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("idempotency_key", "x" * 201, "idempotency_key of transaction @e1"),
        ("idempotency_key", 7, "idempotency_key of transaction @e1"),
        ("request_hash", None, "request_hash of transaction @e1"),
    ],
)
def test_a_bad_key_in_a_file_is_refused_naming_it(
    keyed: Context, tmp_path: Path, field: str, value: Any, said: str
) -> None:
    path = tmp_path / "keyed.jsonl.gz"
    export_context(keyed, path)
    lines = [json.loads(line) for line in _lines(path)[:-1]]
    step = next(line for line in lines if line.get("seq") == 1)
    assert step["idempotency_key"] == "k1"
    step[field] = value
    with pytest.raises(InvalidExport) as caught:
        import_context(_unsigned(lines, tmp_path), slug="edited", allow_unverified=True)
    assert said in caught.value.message
    assert not Context.objects.filter(slug="edited").exists()
