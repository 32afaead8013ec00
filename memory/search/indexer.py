"""The search index worker (R34): applies the IndexIntent outbox to SearchDocument.

How it works: docs/internals.md, section `memory/search/indexer.py`."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.db import DatabaseError, close_old_connections, connection, transaction
from django.db.models import Count, Min
from django.utils import timezone
from psycopg.errors import InsufficientPrivilege

from memory.models import Context, IndexIntent, SearchDocument
from memory.processes import process_alive
from memory.search import documents
from memory.search.documents import WorkerInterrupted, rebuild
from memory.shapes.recall import IndexerStatus, IndexLag
from memory.sql import statements

__all__ = [
    "WorkerInterrupted",
    "apply_pending",
    "drain",
    "flush_pending_entries",
    "index_lag",
    "rebuild",
    "run_forever",
]

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
    """Apply batches until no intent is left (that this worker can claim), then move the
    word index's pending entries into place (`flush_pending_entries`)."""
    total = 0
    while True:
        applied = apply_pending(batch_size=batch_size, context_id=context_id)
        if not applied:
            if total:
                flush_pending_entries()
            return total
        total += applied


# PostgreSQL's GIN index first appends new entries to a pending list, merged into the index
# only at the next VACUUM or when the list passes gin_pending_list_limit (4 MB). Until then
# every search reads the whole list, and the planner, seeing it, prefers reading every
# document: measured after indexing the 4,846 STATE-Bench events, search p50 75 ms, and
# 11.8 ms once the list was merged (28 ms of work for 340 pages).
_GIN_INDEX = next(
    index.name for index in SearchDocument._meta.indexes if isinstance(index, GinIndex)
)
_flush = {"allowed": True}


def flush_pending_entries() -> int:
    """Merge the word index's pending entries into it now (`gin_clean_pending_list`); returns
    the pages merged. Called when the outbox is empty, so the merge runs once per burst of
    writes. A role that does not own the index cannot: logged once, and search stays
    correct, only slower until autovacuum merges the list."""
    if not _flush["allowed"]:
        return 0
    try:
        # A savepoint inside a caller's transaction: a refusal must not abort the caller's.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statements("memory.search")["merge_pending"], [_GIN_INDEX])
            return int(cursor.fetchone()[0])
    except DatabaseError as exc:
        if not isinstance(exc.__cause__, InsufficientPrivilege):
            raise
        _flush["allowed"] = False
        log.warning(
            "cannot merge the search index's pending entries (%s); leaving it to VACUUM", exc
        )
        return 0


def index_lag(context: Context | int) -> IndexLag:
    """How far search is behind the facts of this context (R34)."""
    context_id = context.pk if isinstance(context, Context) else context
    stats = IndexIntent.objects.filter(context_id=context_id).aggregate(
        n=Count("id"), oldest=Min("created_at")
    )
    return lag(stats["n"], stats["oldest"])


# Search reads the same two figures inside its own statement (one round trip less). Its
# answer covers the documents up to the id it planned on (`%(bound)s`): one indexed since,
# whose intent is gone by now, is as missing from the answer as a pending one, and counts.
LAG_COLUMNS = (
    "(SELECT count(*) FROM memory_indexintent WHERE context_id = %(ctx)s) + "
    "(SELECT count(*) FROM memory_searchdocument WHERE id > %(bound)s AND context_id = %(ctx)s), "
    "(SELECT min(created_at) FROM memory_indexintent WHERE context_id = %(ctx)s)"
)


def lag(pending: int, oldest: Any) -> IndexLag:
    """The lag shape: ``{pending_intents, oldest_pending_seconds, indexer}`` from the
    outbox's count and oldest intent time (None when empty), and the indexer process's
    state (`supervisor_status`)."""
    seconds = max(0.0, (timezone.now() - oldest).total_seconds()) if oldest is not None else 0.0
    return {
        "pending_intents": pending,
        "oldest_pending_seconds": round(seconds, 3),
        "indexer": supervisor_status(),
    }


# The state of the indexer process `serve` supervises (morphz/supervisor.py), in a small
# JSON file in the data folder: written by the supervisor, read by every worker's `lag`.
SUPERVISOR_STATUS = "indexer-status.json"


def _status_path() -> Path:
    from morphz.config import data_dir

    return data_dir() / SUPERVISOR_STATUS


def write_supervisor_status(
    state: str, pid: int | None, restarts: int, last_exit: int | None
) -> None:
    """Record the supervised indexer's state ("running" with its pid, or "restarting"),
    its restarts so far and its last exit status (atomically: a temporary file renamed)."""
    path = _status_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"state": state, "pid": pid, "restarts": restarts, "last_exit": last_exit}
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(data))
    os.replace(temporary, path)


def clear_supervisor_status() -> None:
    """Forget the recorded supervisor status (its file; none is fine), so
    `supervisor_status` reads "down" until a supervisor writes it again."""
    with contextlib.suppress(FileNotFoundError):
        _status_path().unlink()


def supervisor_status() -> IndexerStatus:
    """``{state, restarts, last_exit}``: state is "running", "restarting" (the process died
    and waits for its restart), "down" (recorded running but its process is gone: the
    supervisor has not noticed yet, or died itself) or "unsupervised" (no indexer process
    supervised here: an in-process thread, or one run by hand)."""
    try:
        data = json.loads(_status_path().read_text())
    except (FileNotFoundError, ValueError):
        return {"state": "unsupervised", "restarts": 0, "last_exit": None}
    state = data.get("state")
    if state == "running" and not _alive(data.get("pid")):
        state = "down"
    return {"state": state, "restarts": data.get("restarts", 0), "last_exit": data.get("last_exit")}


def _alive(pid: Any) -> bool:
    return isinstance(pid, int) and process_alive(pid)


def run_forever(
    stop: threading.Event,
    *,
    poll_seconds: float = DEFAULT_POLL_SECONDS,
    batch_size: int = DEFAULT_BATCH,
) -> None:
    """Apply intents until `stop` is set; sleeps `poll_seconds` when the outbox is empty.
    Errors are logged (at most once a minute when they repeat) and the loop goes on."""
    last_error = 0.0
    written = False  # documents written since the pending entries were last merged
    while not stop.is_set():
        try:
            applied = apply_pending(batch_size=batch_size)
            written = written or bool(applied)
            if not applied and written:
                flush_pending_entries()
                written = False
            if not applied:
                # Embedding rewrites each row, and so its word-index entries: merge them too.
                applied = documents.embed_missing(limit=batch_size)
                written = written or bool(applied)
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
