"""The SQL that copies a context into its fork (R53), statement by statement: see
`memory.versions.forks` for how and under which lock they run.
"""

from __future__ import annotations

from memory.search import vector_column
from memory.sql.columns import column_list
from memory.versions.points import Point, as_of_sql


def _seq_name(table: str) -> str:
    return f"pg_get_serial_sequence('{table}', 'id')"


# The statements in the one order the id maps and foreign keys need, easier to check read
# top to bottom than spread over helpers.
# long: data, not logic
def copy_statements(point: Point) -> list[str]:
    """The copy, statement by statement; %(dst)s is the new context's id."""
    # The present state reads the plain tables (cheaper than the as-of queries).
    at = "_now" if point.present else "_at"
    frames, events, relations = (as_of_sql(name + at) for name in ("frames", "events", "relations"))
    # pgvector's copy of each embedding goes with it (its trigger would decode them again)
    vector = f", {vector_column.COLUMN}" if vector_column.available() else ""
    d_vector = f", d.{vector_column.COLUMN}" if vector else ""
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
        f"INSERT INTO memory_frame ({column_list('frame_all')}) "  # noqa: S608 - constant SQL fragments; values are parameters
        f"SELECT m.new, %(dst)s, {column_list('frame_copied', 'f')} "
        f"FROM ({frames}) f JOIN fork_frame m ON m.old = f.id",
        "INSERT INTO memory_framerevision (frame_id, revision, body, sources, transaction_id, "
        "version, created_at) "
        "SELECT mf.new, r.revision, r.body, r.sources, mt.new, r.version, r.created_at "
        "FROM memory_framerevision r JOIN fork_frame mf ON mf.old = r.frame_id "
        "JOIN fork_record mt ON mt.old = r.transaction_id WHERE r.version <= %(v)s",
        "INSERT INTO memory_framechange (context_id, frame_id, version, "  # noqa: S608 - constant SQL fragments; values are parameters
        f"{column_list('frame_logged')}) "
        f"SELECT %(dst)s, mf.new, c.version, {column_list('frame_logged', 'c')} "
        "FROM memory_framechange c JOIN fork_frame mf ON mf.old = c.frame_id "
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
        # the search index: documents whose facts read the same at the point are copied (one
        # indexed in parts is indexed again in the fork: few, and its parts stay one write)
        "INSERT INTO memory_searchdocument (context_id, frame_id, event_id, ref, status, kind, "  # noqa: S608 - constant SQL fragments; values are parameters
        f"thread, created_at, tokens, length, embedding, embedding_model, indexed_at{vector}) "
        "SELECT %(dst)s, NULL, me.new, d.ref, "
        "CASE WHEN e.is_observation THEN CASE WHEN e.active THEN 'active' ELSE 'retired' END "
        "ELSE 'recorded' END, d.kind, d.thread, d.created_at, d.tokens, d.length, d.embedding, "
        f"d.embedding_model, d.indexed_at{d_vector} "
        "FROM memory_searchdocument d JOIN fork_event me ON me.old = d.event_id "
        "JOIN memory_event e ON e.id = me.new WHERE d.parts = 0",
        "INSERT INTO memory_searchdocument (context_id, frame_id, event_id, ref, status, kind, "  # noqa: S608 - constant SQL fragments; values are parameters
        f"thread, created_at, tokens, length, embedding, embedding_model, indexed_at{vector}) "
        "SELECT %(dst)s, mf.new, NULL, d.ref, f.status, d.kind, d.thread, d.created_at, "
        f"d.tokens, d.length, d.embedding, d.embedding_model, d.indexed_at{d_vector} "
        "FROM memory_searchdocument d JOIN fork_frame mf ON mf.old = d.frame_id "
        "JOIN memory_frame f ON f.id = mf.new JOIN memory_frame s ON s.id = d.frame_id "
        "WHERE s.revision = f.revision AND d.parts = 0",
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
