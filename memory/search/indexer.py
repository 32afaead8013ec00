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
   ever making a commit wait for the indexer (`documents.index_rows`); then deletes its
   intents.

Public functions:
- `apply_pending(batch_size=200, context_id=None, fail_after=None) -> int` one batch; returns
  the number of intents applied (0 when there was nothing to do). `fail_after=n` raises
  WorkerInterrupted after n documents were written, before commit (crash drills in tests).
- `drain(context_id=None) -> int` batches until the outbox is empty.
- Documents themselves (and `rebuild`) are `memory.search.documents`.
- `index_lag(context) -> {pending_intents, oldest_pending_seconds}`.
- `run_forever(stop, poll_seconds)` the loop behind `manage.py run_indexer`.
- `start_background_indexer()` called by morphz/asgi.py: a daemon thread running
  `run_forever` when settings.MORPHZ_INDEXER_IN_PROCESS is true.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import Count, Min
from django.utils import timezone

from memory.models import Context, IndexIntent
from memory.search import documents
from memory.search.documents import WorkerInterrupted, rebuild

__all__ = ["WorkerInterrupted", "apply_pending", "drain", "index_lag", "rebuild", "run_forever"]

log = logging.getLogger(__name__)

DEFAULT_BATCH = 200
DEFAULT_POLL_SECONDS = 0.25


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
        documents.index_rows(
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
    return lag(stats["n"], stats["oldest"])


# Search reads the same two figures inside its own statement (one round trip less).
LAG_COLUMNS = (
    "(SELECT count(*) FROM memory_indexintent WHERE context_id = %(ctx)s), "
    "(SELECT min(created_at) FROM memory_indexintent WHERE context_id = %(ctx)s)"
)


def lag(pending: int, oldest: Any) -> dict[str, Any]:
    """The lag shape: ``{pending_intents, oldest_pending_seconds}`` from the outbox's count
    and oldest intent time (None when empty)."""
    seconds = max(0.0, (timezone.now() - oldest).total_seconds()) if oldest is not None else 0.0
    return {"pending_intents": pending, "oldest_pending_seconds": round(seconds, 3)}


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
    """Stop the in-process worker (waits up to `timeout` seconds for its batch)."""
    _stop.set()
    if _thread is not None:
        _thread.join(timeout)
    _stop.clear()
