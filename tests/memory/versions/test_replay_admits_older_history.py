"""Replay rebuilds history as it was admitted when written: rules added since for new input
(a user message must say something, a transaction's thread is stated once, the JSON form's
size) do not refuse an older version's history, so verify and import still work on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.contexts import create_context
from memory.timeline.bulk import append_events
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction
from memory.versions.exchange import export_context, import_context
from memory.versions.replay import verify_context


def test_history_with_blank_user_messages_verifies_and_imports(db: Any, tmp_path: Path) -> None:
    context = create_context("older")
    # What an older version let in; `replaying` is how history is written again.
    append_event(context.pk, kind="user_message", content="", replaying=True)
    append_events(
        context.pk,
        [{"kind": "user_message", "content": " "}, {"kind": "tool_result", "content": "ok"}],
        replaying=True,
    )
    submit_transaction(
        context.pk,
        text="(context-tx (thread t1) (derive h1 (a b)))",
        thread="t2",
        replaying=True,
    )
    assert verify_context(context) == []
    path = tmp_path / "older.jsonl.gz"
    export_context(context, path)
    copy = import_context(path, slug="older-copy").context
    assert verify_context(copy) == []
