"""The indexer never leaves an older reading of a frame over newer facts, and never makes a
commit wait for it (R34, R35)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from memory.contexts import create_context
from memory.erasure.erase import erase
from memory.models import Frame, SearchDocument
from memory.search import documents, indexer
from memory.search.query import search
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction


def refs(context, query: str) -> list[str]:
    return [hit["ref"] for hit in search(context, query)["hits"] if hit["type"] == "frame"]


def test_a_reading_made_before_a_revise_is_replaced_by_the_new_facts(release_team, monkeypatch):
    agent = release_team
    agent.commit('(context-tx (derive note (text "alpha build")))')
    indexer.drain()
    note = agent.frame("note")
    stale = documents._frame_documents([note.pk])  # a worker read the frame ...
    agent.commit('(context-tx (revise note (text "omega build")))')  # ... then it changed

    real = documents._frame_documents
    readings = iter([stale])
    monkeypatch.setattr(
        documents, "_frame_documents", lambda pks: next(readings, None) or real(pks)
    )
    with transaction.atomic():
        documents.index_rows([note.pk], [])

    assert refs(agent.context, "omega") == ["note"]
    assert refs(agent.context, "alpha") == []


@pytest.mark.django_db(transaction=True)
def test_a_commit_does_not_wait_for_an_indexer_batch_in_progress():
    context = create_context("busy")
    submit_transaction(context.pk, text="(context-tx (derive a (x y)))")
    pk = Frame.objects.get(context=context, frame_id="a").pk
    batch_open = threading.Event()
    release = threading.Event()

    def slow_batch() -> None:
        try:
            with transaction.atomic():
                documents.index_rows([pk], [])
                batch_open.set()
                release.wait(10)  # the batch holds its locks here
        finally:
            connection.close()

    worker = threading.Thread(target=slow_batch)
    worker.start()
    assert batch_open.wait(10)
    started = time.monotonic()
    submit_transaction(context.pk, text="(context-tx (revise a (x z)) (derive b (x y)))")
    waited = time.monotonic() - started
    release.set()
    worker.join(10)
    assert waited < 2.0


# An erasure (R64) masks the event and rebuilds its document at once; a batch in flight must
# not write the erased words back. The batch runs in a thread on its own connection, paused
# (`_upsert` wrapped) between its reading and its writing, or after its writing, before it
# commits; the erasure runs on another connection meanwhile.
SECRET = "the vault code is Snodgrass"


def _pausing_batch(monkeypatch, *, after_write: bool):
    """A worker thread applying one batch, paused the first time it writes documents
    (before, or after and uncommitted); returns (worker, paused, resume)."""
    paused, resume = threading.Event(), threading.Event()
    real = documents._upsert

    def upsert(batch, fail_after):
        first = threading.current_thread() is worker and not paused.is_set()
        if first and not after_write:
            paused.set()
            resume.wait(10)
        written = real(batch, fail_after)
        if first and after_write:
            paused.set()
            resume.wait(10)
        return written

    def run() -> None:
        try:
            indexer.apply_pending()
        finally:
            connection.close()

    monkeypatch.setattr(documents, "_upsert", upsert)
    worker = threading.Thread(target=run)
    return worker, paused, resume


def _secret_context(where: str = "event"):
    """A context whose event, or frame (and its transaction), holds the secret, unindexed."""
    context = create_context("vault")
    if where == "event":
        append_event(context.pk, kind="tool_result", content=SECRET)
    else:
        submit_transaction(context.pk, text=f'(context-tx (derive vault (note "{SECRET}")))')
    return context


def _found(context, word: str) -> list[str]:
    return [hit["ref"] for hit in search(context, word)["hits"]]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("where", ["event", "frame"])
def test_an_erasure_between_a_batch_reading_and_writing_stays_erased(monkeypatch, where):
    context = _secret_context(where)
    worker, paused, resume = _pausing_batch(monkeypatch, after_write=False)
    worker.start()
    assert paused.wait(10)  # the batch has read the event's text
    erase(context.pk, patterns=["Snodgrass"], reason="gdpr", erased_by="ada")
    resume.set()
    worker.join(10)
    assert _found(context, "Snodgrass") == []
    for document in SearchDocument.objects.filter(context=context):
        assert "snodgrass" not in document.tokens.lower()


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _waits_on_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


@pytest.mark.django_db(transaction=True)
def test_an_erasure_while_a_batch_is_uncommitted_stays_erased(monkeypatch):
    context = _secret_context()
    worker, paused, resume = _pausing_batch(monkeypatch, after_write=True)
    worker.start()
    assert paused.wait(10)  # the batch has written the document, not committed it
    pid: list[int] = []

    def erasing() -> None:
        try:
            pid.append(_backend_pid())
            erase(context.pk, patterns=["Snodgrass"], reason="gdpr", erased_by="ada")
        finally:
            connection.close()

    eraser = threading.Thread(target=erasing)
    eraser.start()
    deadline = time.monotonic() + 10  # until the erasure waits on the batch's row locks
    while not (pid and _waits_on_a_lock(pid[0])) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pid and _waits_on_a_lock(pid[0])
    resume.set()
    worker.join(10)
    eraser.join(10)
    assert _found(context, "Snodgrass") == []
    for document in SearchDocument.objects.filter(context=context):
        assert "snodgrass" not in document.tokens.lower()
