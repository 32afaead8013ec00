"""Fork at version 100 of a 150-version context; 8 threads fork it and write to their forks
while another writes to the source; every fork equals the source at 100 plus its own writes
only, and search in a fork never returns another context's hits (R53)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from memory.contexts import create_context
from memory.models import Context, Event, Frame
from memory.search.indexer import drain
from memory.search.query import search
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction
from memory.versions import asof
from memory.versions.forks import fork_context
from memory.versions.points import resolve_point
from memory.versions.replay import verify_context

FORKS = 8


def _build(context: Context) -> None:
    """150 commits: derive f{i}, revise it, retire it (expiring as ticks pass), in turn."""
    for i in range(150):
        ref = append_event(context.pk, kind="tool_result", content=f"output {i} common").event.ref
        if i % 10 == 0:
            evaluate(context.pk)
        if i % 3 == 0:
            text = f"(derive f{i} (from {ref}) (n {i}) (w common))"
        elif i % 3 == 1:
            text = f"(revise f{i - 1} (from {ref}) (n {i}) (w common))"
        else:
            text = f"(retire f{i - 2} {ref})"
        submit_transaction(context.pk, text=f"(context-tx {text})")


def _frames_at(context: Context, version: int) -> list[tuple[Any, ...]]:
    point = resolve_point(context, version)
    return [
        (f.frame_id, f.revision, f.status, f.body, f.sources)
        for f in asof.frames_as_of(context, point, limit=10_000).items
    ]


def _events_upto(context: Context, seq: int) -> list[tuple[Any, ...]]:
    return list(
        Event.objects.filter(context=context, seq__lte=seq)
        .order_by("seq")
        .values_list("seq", "kind", "content", "active")
    )


@pytest.mark.django_db(transaction=True)
def test_concurrent_forks_are_independent() -> None:
    source = create_context("origin", grace_ticks=2)
    _build(source)
    source.refresh_from_db()
    assert source.version == 150
    point = resolve_point(source, 100)
    expected_frames = _frames_at(source, 100)
    expected_events = _events_upto(source, point.last_seq)

    errors: list[BaseException] = []
    slugs = [f"fork-{n}" for n in range(FORKS)]
    start = threading.Barrier(FORKS + 1)

    def fork_and_write(n: int) -> None:
        try:
            start.wait()
            result = fork_context(source.pk, slug=slugs[n], at_version=100)
            pk = result.context.pk
            for i in range(5):
                ref = append_event(pk, kind="tool_result", content=f"zq{n}word {i}").event.ref
                submit_transaction(
                    pk, text=f"(context-tx (derive mine-{n}-{i} (from {ref}) (by zq{n}word)))"
                )
            evaluate(pk)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    def write_source() -> None:
        try:
            start.wait()
            for i in range(10):
                ref = append_event(source.pk, kind="tool_result", content=f"zqsource {i}").event.ref
                submit_transaction(
                    source.pk, text=f"(context-tx (derive late-{i} (from {ref}) (w zqsource)))"
                )
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=fork_and_write, args=(n,)) for n in range(FORKS)]
    threads.append(threading.Thread(target=write_source))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors

    source.refresh_from_db()
    assert source.version == 160
    drain()
    for n, slug in enumerate(slugs):
        fork = Context.objects.get(slug=slug)
        assert (fork.forked_from_id, fork.forked_version) == (source.pk, 100)
        assert fork.version == 105
        assert _frames_at(fork, 100) == expected_frames
        assert _events_upto(fork, point.last_seq) == expected_events
        own = sorted(
            Frame.objects.filter(context=fork, created_version__gt=100).values_list(
                "frame_id", flat=True
            )
        )
        assert own == [f"mine-{n}-{i}" for i in range(5)]
        assert verify_context(fork) == []
        for other in range(FORKS):
            hits = search(fork, f"zq{other}word")["hits"]
            assert bool(hits) == (other == n), (slug, other, hits)
        assert search(fork, "zqsource")["hits"] == []
        assert search(fork, "common")["hits"]
    assert verify_context(source) == []
    assert not Frame.objects.filter(context=source, frame_id__startswith="mine-").exists()
