"""The search index as derived data (R34): an outbox written with the facts, a worker that
applies it at least once and idempotently, and a rebuild from the facts."""

from __future__ import annotations

import threading
import time

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from memory.contexts import create_context
from memory.errors import RuleViolation
from memory.models import Frame, IndexIntent, SearchDocument
from memory.search import indexer
from memory.search.query import search
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction

QUERIES = ["发布", "api", "passed", "release", "ship", "packaging", "test_0007"]


def snapshot(context):
    return {
        q: [
            (h["ref"], h["status"], h["score"], h["snippet"])
            for h in search(context, q, limit=100)["hits"]
        ]
        for q in QUERIES
    }


def documents():
    return sorted(SearchDocument.objects.values_list("ref", "status", "kind", "thread", "tokens"))


@pytest.fixture
def history(release_frame, first_example):
    agent = release_frame
    agent.commit(first_example.format(base=agent.version))
    agent.observe("API 发布任务 queued", kind="user_message")
    agent.commit('(context-tx (revise release (goal ship-v1) (stage shipped) (notes "发布完成")))')
    return agent


def test_commits_write_intents_with_the_facts_and_rejections_write_none(release_frame):
    before = IndexIntent.objects.count()
    with pytest.raises(RuleViolation):
        release_frame.commit("(context-tx (derive release (x 1)))")
    assert IndexIntent.objects.count() == before
    release_frame.commit("(context-tx (derive other (x 1)))")
    targets = IndexIntent.objects.order_by("-id").values_list("frame_id", "event_id")[:2]
    assert {f for f, _ in targets if f} == {Frame.objects.get(frame_id="other").pk}
    assert any(e for _, e in targets)


def test_applying_twice_gives_the_same_documents(history):
    indexer.drain()
    first = documents()
    indexer.rebuild()  # re-applies every target
    assert documents() == first
    assert IndexIntent.objects.count() == 0


def test_rebuild_gives_the_same_results_as_incremental_indexing(history):
    indexer.drain()
    incremental = snapshot(history.context)
    assert any(incremental.values())
    docs = documents()
    indexer.rebuild(clear=True)
    assert documents() == docs
    assert snapshot(history.context) == incremental


def test_rebuild_index_command_shows_progress_and_rewrites_no_memory(history, capsys):
    indexer.drain()
    frames = list(
        Frame.objects.order_by("pk").values_list("frame_id", "revision", "status", "body")
    )
    docs = documents()
    call_command("rebuild_index", "--clear", "--context", history.context.slug)
    err = capsys.readouterr()
    assert "rebuild_index" in err.err and "100%" in err.err
    assert err.out.startswith("rebuilt the search index of 1 context: ")
    assert documents() == docs
    assert (
        list(Frame.objects.order_by("pk").values_list("frame_id", "revision", "status", "body"))
        == frames
    )


def test_run_indexer_once_drains_the_outbox(history, capsys):
    assert IndexIntent.objects.exists()
    call_command("run_indexer", "--once")
    assert "applied" in capsys.readouterr().out
    assert IndexIntent.objects.count() == 0
    assert search(history.context, "发布")["hits"]


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_batch_loses_nothing():
    context = create_context("crash-drill")
    for i in range(10):
        append_event(context.pk, kind="tool_result", content=f"crash drill output {i}")
    submit_transaction(context.pk, text='(context-tx (derive drill (note "crash drill")))')
    pending = IndexIntent.objects.count()
    with pytest.raises(indexer.WorkerInterrupted):
        indexer.apply_pending(batch_size=100, fail_after=5)
    assert IndexIntent.objects.count() == pending  # the batch rolled back: intents kept
    assert SearchDocument.objects.count() == 0
    assert indexer.drain() == pending
    hits = search(context, "crash drill", limit=100)["hits"]
    assert {h["ref"] for h in hits} >= {f"@e{i}" for i in range(1, 11)} | {"drill"}


@pytest.mark.django_db(transaction=True)
def test_two_workers_never_take_the_same_intent():
    context = create_context("two-workers")
    for i in range(6):
        append_event(context.pk, kind="tool_result", content=f"worker output {i}")
    ids = list(IndexIntent.objects.order_by("id").values_list("id", flat=True))
    claimed = threading.Event()
    release = threading.Event()

    def busy_worker() -> None:
        # Another worker mid-batch: holds the first three intents locked.
        with transaction.atomic():
            list(IndexIntent.objects.filter(id__in=ids[:3]).select_for_update())
            claimed.set()
            release.wait(10)
        connection.close()

    thread = threading.Thread(target=busy_worker)
    thread.start()
    try:
        assert claimed.wait(10)
        started = time.monotonic()
        assert indexer.apply_pending(batch_size=100) == 3  # skips the locked ones, no waiting
        assert time.monotonic() - started < 5
        assert set(IndexIntent.objects.values_list("id", flat=True)) == set(ids[:3])
    finally:
        release.set()
        thread.join(10)
    assert indexer.drain() == 3
    assert len(search(context, "worker output", limit=100)["hits"]) == 6


@pytest.mark.django_db(transaction=True)
def test_the_in_process_worker_indexes_new_facts(settings):
    settings.MORPHZ_INDEXER_IN_PROCESS = True
    context = create_context("background")
    thread = indexer.start_background_indexer()
    assert thread is not None and thread.is_alive()
    try:
        append_event(context.pk, kind="external_fact", content="background quokka sighting")
        deadline = time.monotonic() + 10
        while not search(context, "quokka")["hits"] and time.monotonic() < deadline:
            time.sleep(0.05)
        result = search(context, "quokka")
        assert [h["kind"] for h in result["hits"]] == ["external_fact"]
        assert result["lag"]["pending_intents"] == 0
    finally:
        indexer.stop_background_indexer()
    assert not thread.is_alive()


def test_the_in_process_worker_stays_off_when_disabled(settings):
    settings.MORPHZ_INDEXER_IN_PROCESS = False
    assert indexer.start_background_indexer() is None


def test_a_giant_log_with_many_distinct_words_is_indexed_and_found(release_team):
    words = " ".join(f"w{i:07d}" for i in range(250_000))  # ~2 MB of distinct lexemes
    ref = release_team.observe("needle-start " + words)
    indexer.drain()
    assert ref in [h["ref"] for h in search(release_team.context, "needle")["hits"]]
    assert ref in [h["ref"] for h in search(release_team.context, "w0000001")["hits"]]
