"""The search index worker (R34): applies the IndexIntent outbox to SearchDocument.

Commits write IndexIntent rows in the same database transaction as the facts; this module is
the only writer of SearchDocument. Each batch, in one database transaction:

1. claims up to `batch_size` intents with ``SELECT ... FOR UPDATE SKIP LOCKED`` (workers in
   several processes never take the same intent; a crashed batch rolls back and its intents
   are claimed again: at least once);
2. reads the facts and tokenises them with no lock held (the slow part);
3. upserts the documents (COPY into a temporary staging table, then ``INSERT ... SELECT
   ... ON CONFLICT DO UPDATE``: idempotent), which row-locks them until the batch commits;
4. re-checks each target's fingerprint (revision, status, ...) and rebuilds any target
   that moved since it was read, so an older reading never stays over a newer one, without
   ever making a commit wait for the indexer (see `_index`); then deletes its intents.

Public functions:
- `apply_pending(batch_size=200, context_id=None, fail_after=None) -> int` one batch; returns
  the number of intents applied (0 when there was nothing to do). `fail_after=n` raises
  WorkerInterrupted after n documents were written, before commit (crash drills in tests).
- `drain(context_id=None) -> int` batches until the outbox is empty.
- `index_targets(frame_pks, event_pks) -> int` (re)index those rows now (used by rebuild).
- `index_lag(context) -> {pending_intents, oldest_pending_seconds}`.
- `run_forever(stop, poll_seconds)` the loop behind `manage.py run_indexer`.
- `start_background_indexer()` called by morphz/asgi.py: a daemon thread running
  `run_forever` when settings.MORPHZ_INDEXER_IN_PROCESS is true.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import Count, Min
from django.utils import timezone

from memory.kinds import TRANSACTION, event_status
from memory.models import Context, Event, Frame, FrameRevision, IndexIntent
from memory.search import textindex
from memory.vocabulary import event_ref

log = logging.getLogger(__name__)

DEFAULT_BATCH = 200
DEFAULT_POLL_SECONDS = 0.25


class WorkerInterrupted(RuntimeError):
    """Raised by `apply_pending(fail_after=...)` to abandon a batch mid-way."""


@dataclass
class Document:
    context_id: int
    frame_id: int | None
    event_id: int | None
    ref: str
    status: str
    kind: str
    thread: str
    created_at: Any
    tokens: str  # tsvector literal (the text itself is not stored: snippets come from facts)
    fingerprint: tuple[Any, ...]


def frame_vector(frame_id: str, body: Any) -> str:
    """A frame's terms: its id weighted A, its body's keys and values B (memory.search)."""
    return textindex.weighted_tsvector_literal(
        [(textindex.terms(frame_id), "A"), (textindex.terms(textindex.flatten(body)), "B")]
    )


def event_vector(kind: str, content: str, payload: Any) -> str:
    """An event's terms: its text weighted C, its payload D. A transaction event echoes what
    its frames already hold (its payload is only version numbers): its text is weighted D."""
    if kind == TRANSACTION:
        return textindex.weighted_tsvector_literal([(textindex.terms(content), "D")])
    sections = [(textindex.terms(content), "C")]
    if payload is not None:
        sections.append((textindex.terms(textindex.flatten(payload)), "D"))
    return textindex.weighted_tsvector_literal(sections)


_FRAME_FIELDS = ("pk", "context_id", "frame_id", "body", "status", "revision", "updated_at")


def _frame_fingerprint(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (row["revision"], row["status"], row["updated_at"])


def _frame_documents(pks: list[int]) -> dict[int, Document]:
    if not pks:
        return {}
    rows = list(Frame.objects.filter(pk__in=pks).values(*_FRAME_FIELDS))
    threads = dict(
        FrameRevision.objects.filter(frame_id__in=pks)
        .order_by("frame_id", "-revision")
        .distinct("frame_id")
        .values_list("frame_id", "transaction__thread")
    )
    documents = {}
    for row in rows:
        documents[row["pk"]] = Document(
            context_id=row["context_id"],
            frame_id=row["pk"],
            event_id=None,
            ref=row["frame_id"],
            status=row["status"],
            kind="frame",
            thread=threads.get(row["pk"], "main"),
            created_at=row["updated_at"],
            tokens=frame_vector(row["frame_id"], row["body"]),
            fingerprint=_frame_fingerprint(row),
        )
    return documents


_EVENT_ROWS = """
SELECT id, context_id, seq, kind, thread, content, payload::text, created_at, is_observation,
       active
FROM memory_event WHERE id = ANY(%s)
"""


def _event_documents(pks: list[int]) -> dict[int, Document]:
    if not pks:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_EVENT_ROWS, [pks])
        rows = cursor.fetchall()
    documents = {}
    for pk, context_id, seq, kind, thread, content, payload, created_at, observed, active in rows:
        documents[pk] = Document(
            context_id=context_id,
            frame_id=None,
            event_id=pk,
            ref=event_ref(seq),
            status=event_status(observed, active),
            kind=kind,
            thread=thread,
            created_at=created_at,
            tokens=event_vector(kind, content, json.loads(payload) if payload else None),
            fingerprint=(observed, active),
        )
    return documents


# Documents go in by COPY into a session-local staging table and one INSERT ... SELECT per
# target column: a multi-row VALUES statement with 11 parameters per row spent most of its
# time in the client (splitting and quoting a query of several MB), COPY rows are formatted
# in C and parsed by the server in one pass.
_STAGE_COLUMNS = "context_id, frame_id, event_id, ref, status, kind, thread, created_at, tokens"
_STAGE = """
CREATE TEMP TABLE IF NOT EXISTS morphz_search_stage (
  context_id bigint, frame_id bigint, event_id bigint, ref text, status text, kind text,
  thread text, created_at timestamptz, tokens tsvector
) ON COMMIT DELETE ROWS
"""
# S608: the column list is a constant; {target} is filled with a fixed column name below.
_UPSERT = f"""
INSERT INTO memory_searchdocument ({_STAGE_COLUMNS}, indexed_at)
SELECT {_STAGE_COLUMNS}, now() FROM morphz_search_stage WHERE {{target}} IS NOT NULL
ORDER BY {{target}}
ON CONFLICT ({{target}}) DO UPDATE SET
  ref = EXCLUDED.ref, status = EXCLUDED.status, kind = EXCLUDED.kind, thread = EXCLUDED.thread,
  created_at = EXCLUDED.created_at, tokens = EXCLUDED.tokens,
  indexed_at = EXCLUDED.indexed_at
"""  # noqa: S608


def _upsert(documents: list[Document], fail_after: int | None) -> int:
    """Write the documents (idempotent); with `fail_after`, only that many are written and
    WorkerInterrupted is raised before the caller commits (crash drills in tests)."""
    batch = documents if fail_after is None else documents[:fail_after]
    with connection.cursor() as cursor:
        cursor.execute(_STAGE)
        with cursor.cursor.copy(f"COPY morphz_search_stage ({_STAGE_COLUMNS}) FROM STDIN") as copy:
            for doc in batch:
                copy.write_row(
                    (
                        doc.context_id,
                        doc.frame_id,
                        doc.event_id,
                        doc.ref,
                        doc.status,
                        doc.kind,
                        doc.thread,
                        doc.created_at,
                        doc.tokens,
                    )
                )
        if any(doc.frame_id is not None for doc in batch):
            cursor.execute(_UPSERT.format(target="frame_id"))
        if any(doc.event_id is not None for doc in batch):
            cursor.execute(_UPSERT.format(target="event_id"))
        cursor.execute("TRUNCATE morphz_search_stage")
    if fail_after is not None and len(batch) < len(documents):
        raise WorkerInterrupted(f"interrupted after {len(batch)} documents")
    return len(batch)


def _moved_since_read(
    frames: dict[int, Document], events: dict[int, Document]
) -> tuple[list[int], list[int]]:
    """Targets whose facts changed after they were read (rows that are gone are skipped)."""
    current_frames = {
        row["pk"]: _frame_fingerprint(row)
        for row in Frame.objects.filter(pk__in=list(frames)).values(
            "pk", "revision", "status", "updated_at"
        )
    }
    current_events: dict[int, tuple[Any, ...]] = {}
    if events:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, is_observation, active FROM memory_event WHERE id = ANY(%s)",
                [list(events)],
            )
            current_events = {pk: (observed, active) for pk, observed, active in cursor}
    moved_frames = [
        pk for pk in frames if pk in current_frames and current_frames[pk] != frames[pk].fingerprint
    ]
    moved_events = [
        pk for pk in events if pk in current_events and current_events[pk] != events[pk].fingerprint
    ]
    return moved_frames, moved_events


def _index(frame_pks: list[int], event_pks: list[int], fail_after: int | None = None) -> int:
    """Write documents for these targets, never leaving an older reading over a newer one.

    No lock on the contexts (commits must not wait for the indexer). Instead the documents
    are written first, which row-locks them until this transaction ends, and the facts are
    checked again afterwards: a target that moved since it was read is rebuilt now. A worker
    that read newer facts either wrote before us (we see the move and rebuild) or blocks on
    our row locks and writes after us; a commit after our check leaves a new intent."""
    frames = _frame_documents(sorted(set(frame_pks)))
    events = _event_documents(sorted(set(event_pks)))
    documents = [frames[pk] for pk in sorted(frames)] + [events[pk] for pk in sorted(events)]
    written = _upsert(documents, fail_after)
    moved_frames, moved_events = _moved_since_read(frames, events)
    if moved_frames or moved_events:
        fresh_frames = _frame_documents(moved_frames)
        fresh_events = _event_documents(moved_events)
        _upsert(
            [fresh_frames[pk] for pk in sorted(fresh_frames)]
            + [fresh_events[pk] for pk in sorted(fresh_events)],
            None,
        )
    return written


def index_targets(frame_pks: list[int], event_pks: list[int]) -> int:
    """(Re)index these frames and events from the facts now; returns documents written."""
    with transaction.atomic():
        return _index(frame_pks, event_pks)


def apply_pending(
    *, batch_size: int = DEFAULT_BATCH, context_id: int | None = None, fail_after: int | None = None
) -> int:
    """Apply one batch of index intents; returns how many intents were applied."""
    with transaction.atomic():
        query = IndexIntent.objects.order_by("id")
        if context_id is not None:
            query = query.filter(context_id=context_id)
        intents = list(
            query.select_for_update(skip_locked=True).values_list("pk", "frame_id", "event_id")[
                :batch_size
            ]
        )
        if not intents:
            return 0
        _index(
            [f for _, f, _ in intents if f is not None],
            [e for _, _, e in intents if e is not None],
            fail_after=fail_after,
        )
        IndexIntent.objects.filter(pk__in=[pk for pk, _, _ in intents]).delete()
        return len(intents)


def drain(*, context_id: int | None = None, batch_size: int = DEFAULT_BATCH) -> int:
    """Apply batches until no intent is left (that this worker can claim)."""
    total = 0
    while True:
        applied = apply_pending(batch_size=batch_size, context_id=context_id)
        if not applied:
            return total
        total += applied


def index_lag(context: Context | int) -> dict[str, Any]:
    """How far search is behind the facts of this context (R34)."""
    context_id = context.pk if isinstance(context, Context) else context
    stats = IndexIntent.objects.filter(context_id=context_id).aggregate(
        n=Count("id"), oldest=Min("created_at")
    )
    oldest = stats["oldest"]
    seconds = max(0.0, (timezone.now() - oldest).total_seconds()) if oldest is not None else 0.0
    return {"pending_intents": stats["n"], "oldest_pending_seconds": round(seconds, 3)}


def run_forever(
    stop: threading.Event,
    *,
    poll_seconds: float = DEFAULT_POLL_SECONDS,
    batch_size: int = DEFAULT_BATCH,
) -> None:
    """Apply intents until `stop` is set; sleeps `poll_seconds` when the outbox is empty.
    Errors are logged (at most once a minute when they repeat) and the loop goes on."""
    last_error = 0.0
    while not stop.is_set():
        try:
            applied = apply_pending(batch_size=batch_size)
        except Exception:
            applied = 0
            if time.monotonic() - last_error > 60:
                log.exception("search indexer batch failed; retrying")
                last_error = time.monotonic()
            connection.close()  # a broken connection is reopened on the next batch
        else:
            close_old_connections()
        if not applied:
            stop.wait(poll_seconds)


_thread: threading.Thread | None = None
_stop = threading.Event()


def start_background_indexer() -> threading.Thread | None:
    """Start the in-process worker once per process (when MORPHZ_INDEXER_IN_PROCESS)."""
    global _thread
    if not getattr(settings, "MORPHZ_INDEXER_IN_PROCESS", False):
        return None
    if _thread is not None and _thread.is_alive():
        return _thread

    def target() -> None:
        try:
            run_forever(_stop)
        finally:
            connection.close()

    _thread = threading.Thread(target=target, name="morphz-indexer", daemon=True)
    _thread.start()
    return _thread


def stop_background_indexer(timeout: float = 5.0) -> None:
    _stop.set()
    if _thread is not None:
        _thread.join(timeout)
    _stop.clear()


def rebuild(
    *,
    context_ids: list[int] | None = None,
    clear: bool = False,
    batch_size: int = 500,
    progress: Any = None,
) -> int:
    """Rebuild documents for every frame and event (of these contexts) from the facts.

    Only SearchDocument is written; memory is never touched (R34). `progress(n)` is called
    after each batch with the number of rows done. With `clear`, the contexts' documents are
    deleted first. Returns the number of documents written."""
    from memory.models import SearchDocument

    contexts = Context.objects.order_by("pk")
    if context_ids is not None:
        contexts = contexts.filter(pk__in=context_ids)
    written = 0
    for context_id in contexts.values_list("pk", flat=True):
        if clear:
            SearchDocument.objects.filter(context_id=context_id).delete()
        for model, is_frame in ((Frame, True), (Event, False)):
            last = 0
            while True:
                pks = list(
                    model.objects.filter(context_id=context_id, pk__gt=last)
                    .order_by("pk")
                    .values_list("pk", flat=True)[:batch_size]
                )
                if not pks:
                    break
                written += index_targets(pks, []) if is_frame else index_targets([], pks)
                last = pks[-1]
                if progress is not None:
                    progress(len(pks))
    # Every document was rewritten: fresh statistics, or the planner may pick a plan for a
    # table it believes tiny (filtering a whole context instead of using the GIN index).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    return written


def count_facts(context_ids: list[int] | None = None) -> int:
    frames, events = Frame.objects.all(), Event.objects.all()
    if context_ids is not None:
        frames, events = (
            frames.filter(context_id__in=context_ids),
            events.filter(context_id__in=context_ids),
        )
    return frames.count() + events.count()
