"""The indexer never leaves an older reading of a frame over newer facts, and never makes a
commit wait for it (R34, R35)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from memory.contexts import create_context
from memory.models import Frame
from memory.search import documents, indexer
from memory.search.query import search
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
