"""Forks (R53): an independent context whose history and state equal the source's at a point.

    fork_context(source, *, slug=None, at_version=None, name=None) -> ForkResult

Copies, as of the point (see `memory.versions.points`), every row the source holds:
events, evaluations, transaction records, frames with their revisions, relations,
retirement requests, the history logs, the counters and settings, and the search index
(documents whose text is unchanged at the point are copied; the rest are queued for the
indexer). Rows are copied with `INSERT ... SELECT` in one database transaction, new ids
drawn from the tables' sequences into temporary maps first, so foreign keys between copied
rows are rewritten with one join each. The source's row is share-locked meanwhile: writes
to it wait (a few statements), reads and other forks do not. Nothing is shared afterwards:
every row of the fork is its own.

A frozen source can be forked; the fork is not frozen. Raises InvalidRequest
(`invalid_version`, `invalid_request` for a bad slug, `context_exists`).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, IntegrityError, connection, transaction

from memory.contexts import (
    SETTINGS_FIELDS,
    IssuedToken,
    check_slug,
    check_slug_free,
    hash_token,
    issue_token,
    settings_of,
)
from memory.errors import Conflict, InvalidRequest, NotFound
from memory.models import ApiToken, Context, ForkReceipt
from memory.search.indexer import flush_pending_entries
from memory.versions.points import (
    CONTEXT_AT,
    CONTEXT_COLUMNS,
    EVENTS_AT,
    FRAMES_AT,
    RELATIONS_AT,
    Point,
    resolve_point,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ForkResult:
    context: Context
    token: IssuedToken
    source_slug: str
    version: int
    tick: int

    def as_dict(self) -> dict[str, Any]:
        """The API's answer: slug, token (shown once), forked_from {slug, version, tick},
        and the new context's version and tick."""
        return {
            "slug": self.context.slug,
            "token": self.token.raw,
            "forked_from": {"slug": self.source_slug, "version": self.version, "tick": self.tick},
            "version": self.context.version,
            "tick": self.context.tick,
        }


def _seq_name(table: str) -> str:
    return f"pg_get_serial_sequence('{table}', 'id')"


# Present-state sources: the plain tables (cheaper than the as-of queries).
_FRAMES_NOW = """
SELECT f.id, f.context_id, f.frame_id, f.revision, f.body, f.sources, f.status, f.protected,
       f.retire_requested_tick, f.retire_due_tick, f.retire_reason, f.retire_generation,
       f.token_estimate, f.created_version, f.changed_version, f.updated_at
FROM memory_frame f WHERE f.context_id = %(ctx)s
"""
_EVENTS_NOW = """
SELECT e.id, e.context_id, e.seq, e.kind, e.thread, e.content, e.payload, e.created_at,
       e.idempotency_key, e.size_chars, e.token_estimate, e.is_observation, e.active,
       e.status_version, e.pending, e.evaluation_id, e.delivers, e.request_state,
       e.delivered_by_seq
FROM memory_event e WHERE e.context_id = %(ctx)s
"""
_RELATIONS_NOW = """
SELECT r.id, r.context_id, r.subject_id, r.name, r.object_id, r.created_version,
       r.removed_version
FROM memory_relation r WHERE r.context_id = %(ctx)s
"""


# The statements in the one order the id maps and foreign keys need, easier to check read
# top to bottom than spread over helpers.
# long: data, not logic
def _statements(point: Point) -> list[str]:
    """The copy, statement by statement; %(dst)s is the new context's id."""
    frames = _FRAMES_NOW if point.present else FRAMES_AT
    events = _EVENTS_NOW if point.present else EVENTS_AT
    relations = _RELATIONS_NOW if point.present else RELATIONS_AT
    return [
        "SET LOCAL morphz.copying = 'on'",
        # (dropped first too: inside an enclosing transaction ON COMMIT comes later)
        "DROP TABLE IF EXISTS fork_eval, fork_event, fork_record, fork_frame",
        # id maps: old id -> new id, drawn from each table's own sequence in the old ids'
        # order (evaluations and records are ordered by id)
        "CREATE TEMP TABLE fork_eval ON COMMIT DROP AS "  # noqa: S608 - constant SQL fragments; values are parameters
        f"SELECT id AS old, nextval({_seq_name('memory_evaluation')}) AS new "
        "FROM (SELECT id FROM memory_evaluation WHERE context_id = %(ctx)s "
        "AND view_version <= %(v)s ORDER BY id) s",
        "CREATE TEMP TABLE fork_event ON COMMIT DROP AS "  # noqa: S608 - constant SQL fragments; values are parameters
        f"SELECT id AS old, nextval({_seq_name('memory_event')}) AS new "
        "FROM (SELECT id FROM memory_event WHERE context_id = %(ctx)s AND seq <= %(seq)s "
        "ORDER BY seq) s",
        "CREATE TEMP TABLE fork_record ON COMMIT DROP AS "  # noqa: S608 - constant SQL fragments; values are parameters
        f"SELECT id AS old, nextval({_seq_name('memory_transactionrecord')}) AS new "
        "FROM (SELECT id FROM memory_transactionrecord WHERE context_id = %(ctx)s "
        "AND (committed_version <= %(v)s OR (committed_version IS NULL AND id < %(rec)s)) "
        "ORDER BY id) s",
        "CREATE TEMP TABLE fork_frame ON COMMIT DROP AS "  # noqa: S608 - constant SQL fragments; values are parameters
        f"SELECT id AS old, nextval({_seq_name('memory_frame')}) AS new "
        "FROM (SELECT id FROM memory_frame WHERE context_id = %(ctx)s "
        "AND created_version <= %(v)s ORDER BY id) s",
        "ANALYZE fork_eval, fork_event, fork_record, fork_frame",
        # evaluations
        "INSERT INTO memory_evaluation (id, context_id, thread, idempotency_key, continuation, "
        "tick, advanced_tick, view_version, claimed_seqs, last_seq, result, created_at) "
        "SELECT m.new, %(dst)s, v.thread, v.idempotency_key, v.continuation, v.tick, "
        "v.advanced_tick, v.view_version, v.claimed_seqs, v.last_seq, "
        # the stored result is copied as is (rewriting its `id` decompressed every large
        # compiled input: most of a fork's time); readers take the id from the row
        "v.result, v.created_at "
        "FROM memory_evaluation v JOIN fork_eval m ON m.old = v.id",
        # events as of the point
        "INSERT INTO memory_event (id, context_id, seq, kind, thread, content, payload, "  # noqa: S608 - constant SQL fragments; values are parameters
        "created_at, idempotency_key, size_chars, token_estimate, is_observation, active, "
        "status_version, pending, evaluation_id, delivers, request_state, delivered_by_seq) "
        "SELECT m.new, %(dst)s, e.seq, e.kind, e.thread, e.content, e.payload, e.created_at, "
        "e.idempotency_key, e.size_chars, e.token_estimate, e.is_observation, e.active, "
        "e.status_version, e.pending, me.new, e.delivers, e.request_state, e.delivered_by_seq "
        f"FROM ({events}) e JOIN fork_event m ON m.old = e.id "
        "LEFT JOIN fork_eval me ON me.old = e.evaluation_id",
        # transaction records
        "INSERT INTO memory_transactionrecord (id, context_id, author, author_kind, thread, "
        "base_version, committed_version, status, reason, text, ops, receipt, errors, "
        "frame_ids, event_id, evaluation_id, created_at) "
        "SELECT m.new, %(dst)s, t.author, t.author_kind, t.thread, t.base_version, "
        "t.committed_version, t.status, t.reason, t.text, t.ops, t.receipt, t.errors, "
        "t.frame_ids, me.new, mv.new, t.created_at "
        "FROM memory_transactionrecord t JOIN fork_record m ON m.old = t.id "
        "LEFT JOIN fork_event me ON me.old = t.event_id "
        "LEFT JOIN fork_eval mv ON mv.old = t.evaluation_id",
        # frames as of the point, their revisions, logs, relations and retirement requests
        "INSERT INTO memory_frame (id, context_id, frame_id, revision, body, sources, status, "  # noqa: S608 - constant SQL fragments; values are parameters
        "protected, retire_requested_tick, retire_due_tick, retire_reason, retire_generation, "
        "token_estimate, created_version, changed_version, updated_at) "
        "SELECT m.new, %(dst)s, f.frame_id, f.revision, f.body, f.sources, f.status, "
        "f.protected, f.retire_requested_tick, f.retire_due_tick, f.retire_reason, "
        "f.retire_generation, f.token_estimate, f.created_version, f.changed_version, "
        f"f.updated_at FROM ({frames}) f JOIN fork_frame m ON m.old = f.id",
        "INSERT INTO memory_framerevision (frame_id, revision, body, sources, transaction_id, "
        "version, created_at) "
        "SELECT mf.new, r.revision, r.body, r.sources, mt.new, r.version, r.created_at "
        "FROM memory_framerevision r JOIN fork_frame mf ON mf.old = r.frame_id "
        "JOIN fork_record mt ON mt.old = r.transaction_id WHERE r.version <= %(v)s",
        "INSERT INTO memory_framechange (context_id, frame_id, version, revision, status, "
        "protected, retire_requested_tick, retire_due_tick, retire_reason, retire_generation, "
        "token_estimate) "
        "SELECT %(dst)s, mf.new, c.version, c.revision, c.status, c.protected, "
        "c.retire_requested_tick, c.retire_due_tick, c.retire_reason, c.retire_generation, "
        "c.token_estimate FROM memory_framechange c JOIN fork_frame mf ON mf.old = c.frame_id "
        "WHERE c.version <= %(v)s ORDER BY c.id",
        "INSERT INTO memory_eventchange (context_id, event_id, seq, version, active) "
        "SELECT %(dst)s, me.new, c.seq, c.version, c.active FROM memory_eventchange c "
        "JOIN fork_event me ON me.old = c.event_id WHERE c.version <= %(v)s ORDER BY c.id",
        "INSERT INTO memory_settingschange (context_id, kind, version, last_seq, evaluations, "
        "settings, created_at) SELECT %(dst)s, kind, version, last_seq, evaluations, settings, "
        "created_at FROM memory_settingschange WHERE context_id = %(ctx)s AND version <= %(v)s "
        "ORDER BY id",
        "INSERT INTO memory_maintenancechange (context_id, version, last_seq, in_maintenance) "
        "SELECT %(dst)s, version, last_seq, in_maintenance FROM memory_maintenancechange "
        "WHERE context_id = %(ctx)s AND last_seq <= %(seq)s ORDER BY id",
        "INSERT INTO memory_relation (context_id, subject_id, name, object_id, "  # noqa: S608 - constant SQL fragments; values are parameters
        "created_version, removed_version) "
        "SELECT %(dst)s, ms.new, r.name, mo.new, r.created_version, r.removed_version "
        f"FROM ({relations}) r JOIN fork_frame ms ON ms.old = r.subject_id "
        "JOIN fork_frame mo ON mo.old = r.object_id ORDER BY r.id",
        "INSERT INTO memory_retirementrequest (frame_id, generation, requested_tick, due_tick, "
        "reason, requested_version, outcome, resolved_tick, resolved_version) "
        "SELECT mf.new, q.generation, q.requested_tick, q.due_tick, q.reason, "
        "q.requested_version, "
        "CASE WHEN q.resolved_version > %(v)s THEN 'pending' ELSE q.outcome END, "
        "CASE WHEN q.resolved_version > %(v)s THEN NULL ELSE q.resolved_tick END, "
        "CASE WHEN q.resolved_version > %(v)s THEN NULL ELSE q.resolved_version END "
        "FROM memory_retirementrequest q JOIN fork_frame mf ON mf.old = q.frame_id "
        "WHERE q.requested_version <= %(v)s",
        # the search index: documents whose facts read the same at the point are copied
        "INSERT INTO memory_searchdocument (context_id, frame_id, event_id, ref, status, kind, "
        "thread, created_at, tokens, length, embedding, embedding_model, indexed_at) "
        "SELECT %(dst)s, NULL, me.new, d.ref, "
        "CASE WHEN e.is_observation THEN CASE WHEN e.active THEN 'active' ELSE 'retired' END "
        "ELSE 'recorded' END, d.kind, d.thread, d.created_at, d.tokens, d.length, d.embedding, "
        "d.embedding_model, d.indexed_at "
        "FROM memory_searchdocument d JOIN fork_event me ON me.old = d.event_id "
        "JOIN memory_event e ON e.id = me.new",
        "INSERT INTO memory_searchdocument (context_id, frame_id, event_id, ref, status, kind, "
        "thread, created_at, tokens, length, embedding, embedding_model, indexed_at) "
        "SELECT %(dst)s, mf.new, NULL, d.ref, f.status, d.kind, d.thread, d.created_at, "
        "d.tokens, d.length, d.embedding, d.embedding_model, d.indexed_at "
        "FROM memory_searchdocument d JOIN fork_frame mf ON mf.old = d.frame_id "
        "JOIN memory_frame f ON f.id = mf.new JOIN memory_frame s ON s.id = d.frame_id "
        "WHERE s.revision = f.revision",
        # whatever has no document yet (changed since, or not indexed in the source either)
        "INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at) "
        "SELECT %(dst)s, f.id, NULL, now() FROM memory_frame f "
        "WHERE f.context_id = %(dst)s AND NOT EXISTS "
        "(SELECT 1 FROM memory_searchdocument d WHERE d.frame_id = f.id)",
        "INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at) "
        "SELECT %(dst)s, NULL, e.id, now() FROM memory_event e "
        "WHERE e.context_id = %(dst)s AND NOT EXISTS "
        "(SELECT 1 FROM memory_searchdocument d WHERE d.event_id = e.id)",
        "DROP TABLE fork_eval, fork_event, fork_record, fork_frame",
    ]


def _new_slug(source_slug: str) -> str:
    return f"{source_slug[:50]}-fork-{secrets.token_hex(3)}"


def fork_context(
    source: Context | int,
    *,
    slug: str | None = None,
    at_version: Any = None,
    name: str | None = None,
    token_name: str = "fork",
    idempotency_key: str | None = None,
    caller_secret: bytes | None = None,
) -> ForkResult:
    """Fork `source` at `at_version` (default: now) into a new context `slug`, named `name`
    (None: `<source name> (fork at vN)`; an empty or blank name is InvalidRequest, not the
    default).

    With `idempotency_key` (and `caller_secret`, the caller's own credential: its raw API
    token), a retry of a fork whose answer was lost gets the same fork and the same token;
    the key with other arguments, or from another caller, is Conflict
    `idempotency_key_reused`. See `seal_token` for how the token is kept."""
    source_pk = source.pk if isinstance(source, Context) else source
    request = {"slug": slug, "at_version": at_version, "name": name}
    if idempotency_key is not None:
        if caller_secret is None:
            raise ValueError("an idempotency key needs the caller's secret")
        again = _fork_again(source_pk, idempotency_key, request, caller_secret)
        if again is not None:
            return again
    if slug is not None:
        check_slug(slug)
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise InvalidRequest(
            "name must not be empty: leave it out for the default name",
            details=[{"field": "name"}],
        )
    try:
        with transaction.atomic():
            forked = _fork(source_pk, slug, at_version, name, token_name)
            if idempotency_key is not None:
                assert caller_secret is not None
                _keep_receipt(source_pk, idempotency_key, request, forked, caller_secret)
    except IntegrityError as exc:
        if idempotency_key is not None and caller_secret is not None:
            # The same key, committed by a concurrent request meanwhile: its answer.
            again = _fork_again(source_pk, idempotency_key, request, caller_secret)
            if again is not None:
                return again
        if slug is not None and Context.objects.filter(slug__iexact=slug).exists():
            raise InvalidRequest(
                f"a context with slug {slug!r} already exists (whatever its case)",
                code="context_exists",
            ) from None
        raise exc
    # The fork's search documents were copied by SQL, not by the indexer: merge them into
    # the word index now, as the indexer does when it catches up (memory.search.indexer).
    # The fork has committed, and its token is shown once: a failure here only leaves the
    # merge to the indexer or VACUUM, it must not turn the fork into an error.
    try:
        flush_pending_entries()
    except DatabaseError:
        log.warning(
            "fork %s: the word index's pending entries were not merged", forked.context.slug
        )
    return forked


def _fork(
    source_pk: int, slug: str | None, at_version: Any, name: str | None, token_name: str
) -> ForkResult:
    # Share lock: writers of the source (which take FOR UPDATE) wait until the copy is done.
    with connection.cursor() as cur:
        cur.execute("SELECT id FROM memory_context WHERE id = %s FOR SHARE", [source_pk])
        locked = cur.fetchone()
    src = Context.objects.filter(pk=source_pk).first() if locked else None
    if src is None:
        raise NotFound(f"context {source_pk} does not exist")
    point = resolve_point(src, src.version if at_version is None else at_version, "at_version")
    params = point.params()
    with connection.cursor() as cur:
        cur.execute(CONTEXT_AT if not point.present else "SELECT 1", params)
        at = dict(zip(CONTEXT_COLUMNS, cur.fetchone() or (), strict=False))
    src_settings = settings_of(src) if point.present else at  # the settings at the point
    new_slug = slug or _new_slug(src.slug)
    check_slug_free(new_slug)
    dst = Context(
        slug=new_slug,
        name=name or f"{src.name or src.slug} (fork at v{point.version})",
        version=point.version,
        tick=point.tick,
        last_seq=point.last_seq,
        **{name: src_settings[name] for name in SETTINGS_FIELDS},
        used_tokens=src.used_tokens if point.present else at["used_tokens"],
        in_maintenance=src.in_maintenance if point.present else at["in_maintenance"],
        frozen=False,
        forked_from=src,
        forked_version=point.version,
        forked_tick=point.tick,
    )
    with connection.cursor() as cur:
        cur.execute("SET LOCAL morphz.copying = 'on'")
        dst.save(force_insert=True)
        params["dst"] = dst.pk
        for sql in _statements(point):
            cur.execute(sql, params)
        cur.execute("SET LOCAL morphz.copying = 'off'")
    token = issue_token(dst, name=token_name)
    return ForkResult(dst, token, src.slug, point.version, point.tick)


# -- forks under an idempotency key --------------------------------------------------------
# The fork's token is shown once and stored only as a hash; to answer a retry with it, the
# receipt keeps it sealed: XORed with a one-time pad drawn from HMAC-SHA256 keyed by the
# caller's own credential (its raw API token, which the server never stores) over the
# source and the key. The database alone cannot give it back, only a caller presenting
# the same credential and key can; each (credential, source, key) seals one token once.


def _pad(caller_secret: bytes, source_pk: int, key: str, length: int) -> bytes:
    label = f"morphz-fork-token\0{source_pk}\0{key}".encode()
    blocks = b""
    counter = 0
    while len(blocks) < length:
        blocks += hmac.new(caller_secret, label + bytes([counter]), hashlib.sha256).digest()
        counter += 1
    return blocks[:length]


def seal_token(raw: str, caller_secret: bytes, source_pk: int, key: str) -> bytes:
    """`raw` sealed for the caller holding `caller_secret` (see above); `unseal_token`
    reverses it."""
    data = raw.encode()
    pad = _pad(caller_secret, source_pk, key, len(data))
    return bytes(a ^ b for a, b in zip(data, pad, strict=True))


def unseal_token(sealed: bytes, caller_secret: bytes, source_pk: int, key: str) -> str | None:
    """The raw token `seal_token` sealed for `caller_secret`, or None when these bytes do
    not unseal to text (another caller's secret): the caller is then not the one it was
    sealed for. Never raises on foreign bytes."""
    pad = _pad(caller_secret, source_pk, key, len(sealed))
    try:
        return bytes(a ^ b for a, b in zip(sealed, pad, strict=True)).decode()
    except UnicodeDecodeError:
        return None


def _keep_receipt(
    source_pk: int, key: str, request: dict[str, Any], forked: ForkResult, secret: bytes
) -> None:
    ForkReceipt.objects.create(
        source_id=source_pk,
        key=key,
        fork=forked.context,
        request=request,
        sealed_token=seal_token(forked.token.raw, secret, source_pk, key),
    )


def _fork_again(
    source_pk: int, key: str, request: dict[str, Any], secret: bytes
) -> ForkResult | None:
    """The first answer of a fork made under `key`, or None when there is none."""
    receipt = (
        ForkReceipt.objects.select_related("fork", "source").filter(source_id=source_pk, key=key)
    ).first()
    if receipt is None:
        return None
    if receipt.request != request:
        raise Conflict(
            f"idempotency key {key!r} was used for another fork of this context",
            code="idempotency_key_reused",
            details=[{"field": "idempotency_key"}],
        )
    raw = unseal_token(bytes(receipt.sealed_token), secret, source_pk, key)
    token = (
        ApiToken.objects.filter(context=receipt.fork, key_hash=hash_token(raw)).first()
        if raw is not None
        else None
    )
    if token is None or raw is None:
        raise Conflict(
            f"idempotency key {key!r} was used for a fork by another caller",
            code="idempotency_key_reused",
            details=[{"field": "idempotency_key"}],
        )
    if token.revoked_at is not None:
        raise Conflict(
            f"the fork made under idempotency key {key!r} exists, but its token was revoked",
            code="idempotency_key_reused",
            details=[{"field": "idempotency_key"}],
        )
    fork = receipt.fork
    return ForkResult(
        fork,
        IssuedToken(token=token, raw=raw),
        receipt.source.slug,
        int(fork.forked_version or 0),
        int(fork.forked_tick or 0),
    )
