"""A scratch context (replay, verify) is purged while the search indexer is indexing its
events: the purge waits for the indexer's batch and removes the documents it wrote, instead
of failing at commit on a search document that still names a deleted event."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from memory.contexts import create_context
from memory.models import Context, IndexIntent, SearchDocument
from memory.search import documents
from memory.timeline.events import append_event
from memory.versions.replay import purge_scratch


@pytest.mark.django_db(transaction=True)
def test_purge_waits_for_an_indexer_batch_on_the_scratch_context() -> None:
    scratch = create_context("replay-scratch-purge")
    for i in range(3):
        append_event(scratch.pk, kind="tool_result", content=f"output {i} words")
    claimed = threading.Event()
    failures: list[BaseException] = []

    def indexer() -> None:
        try:
            with transaction.atomic():
                intents = list(
                    IndexIntent.objects.filter(context_id=scratch.pk)
                    .select_for_update()
                    .values_list("pk", "event_id")
                )
                claimed.set()
                time.sleep(0.5)  # the purge starts meanwhile
                documents.index_rows([], [e for _, e in intents if e is not None])
                IndexIntent.objects.filter(pk__in=[pk for pk, _ in intents]).delete()
        except BaseException as exc:  # reported below
            failures.append(exc)
        finally:
            connection.close()

    worker = threading.Thread(target=indexer)
    worker.start()
    assert claimed.wait(10)
    purge_scratch(scratch.pk)
    worker.join(10)
    assert not failures
    assert not Context.objects.filter(pk=scratch.pk).exists()
    assert not SearchDocument.objects.filter(context_id=scratch.pk).exists()
