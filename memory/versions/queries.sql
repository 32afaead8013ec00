-- Reads as of a point in history (memory.versions.points, .asof, .forks, .fork_copy).
-- Each selects, for the point in %(ctx)s / %(v)s / %(seq)s, rows shaped like the stored
-- table: frames as {{frame_all}}, the others as memory.sql.columns names them.

-- name: frames_now
-- The present state: the plain tables (cheaper than the as-of queries).
SELECT {{f.frame_all}} FROM memory_frame f WHERE f.context_id = %(ctx)s

-- name: events_now
SELECT {{e.event_all}} FROM memory_event e WHERE e.context_id = %(ctx)s

-- name: relations_now
SELECT {{r.relation_all}} FROM memory_relation r WHERE r.context_id = %(ctx)s

-- name: frames_at
-- Every frame of the context as it was at the end of version %(v)s.
SELECT f.id, f.context_id, f.frame_id, h.revision, rv.body, rv.sources, h.status, h.protected,
       h.retire_requested_tick, h.retire_due_tick, h.retire_reason, h.retire_generation,
       h.token_estimate, f.created_version, h.version AS changed_version, f.updated_at
FROM memory_frame f
JOIN (
  SELECT DISTINCT ON (c.frame_id) c.* FROM memory_framechange c
  WHERE c.context_id = %(ctx)s AND c.version <= %(v)s
  ORDER BY c.frame_id, c.version DESC, c.id DESC
) h ON h.frame_id = f.id
JOIN memory_framerevision rv ON rv.frame_id = f.id AND rv.revision = h.revision
WHERE f.context_id = %(ctx)s AND f.created_version <= %(v)s

-- name: frames_at_select
-- Frames as they were at the end of version %(v)s: each frame's last change up to then
-- and the revision it named, by index lookups per frame. Callers add their WHERE clause.
SELECT f.id, f.context_id, f.frame_id, h.revision, rv.body, rv.sources, h.status, h.protected,
       h.retire_requested_tick, h.retire_due_tick, h.retire_reason, h.retire_generation,
       h.token_estimate, f.created_version, h.version AS changed_version, f.updated_at
FROM memory_frame f
CROSS JOIN LATERAL (
  SELECT c.* FROM memory_framechange c WHERE c.frame_id = f.id AND c.version <= %(v)s
  ORDER BY c.version DESC, c.id DESC LIMIT 1
) h
JOIN memory_framerevision rv ON rv.frame_id = f.id AND rv.revision = h.revision

-- name: frame_at
-- One frame by id: index lookups only (the as-of read the benchmark measures).
{{> frames_at_select}}
WHERE f.context_id = %(ctx)s AND f.frame_id = %(fid)s AND f.created_version <= %(v)s

-- name: frames_page_at
-- Frames walked in id order, each with its logged state at the point: the planner stops
-- after %(limit)s matches, so a page costs index lookups, not the whole context.
{{> frames_at_select}}
WHERE f.context_id = %(ctx)s AND f.created_version <= %(v)s AND f.frame_id > %(after)s
ORDER BY f.frame_id LIMIT %(limit)s

-- name: frames_page_at_status
-- The same with one status.
{{> frames_at_select}}
WHERE f.context_id = %(ctx)s AND f.created_version <= %(v)s AND f.frame_id > %(after)s
  AND h.status = %(status)s
ORDER BY f.frame_id LIMIT %(limit)s

-- name: frames_view_at
-- The frames of the context at the point (recall's temporary view).
{{> frames_at_select}}
WHERE f.context_id = %(ctx)s AND f.created_version <= %(v)s

-- name: events_at
SELECT e.id, e.context_id, e.seq, e.kind, e.thread, e.content, e.payload, e.created_at,
       e.idempotency_key, e.size_chars, e.token_estimate, e.is_observation,
       coalesce(h.active, e.is_observation) AS active,
       coalesce(h.version, 0) AS status_version,
       (e.pending OR (ev.id IS NOT NULL AND ev.view_version > %(v)s)) AS pending,
       CASE WHEN ev.view_version <= %(v)s THEN e.evaluation_id END AS evaluation_id,
       e.delivers,
       CASE WHEN e.delivered_by_seq > %(seq)s THEN 'open' ELSE e.request_state END
         AS request_state,
       CASE WHEN e.delivered_by_seq > %(seq)s THEN NULL ELSE e.delivered_by_seq END
         AS delivered_by_seq
FROM memory_event e
LEFT JOIN (
  SELECT DISTINCT ON (c.event_id) c.event_id, c.active, c.version FROM memory_eventchange c
  WHERE c.context_id = %(ctx)s AND c.version <= %(v)s
  ORDER BY c.event_id, c.version DESC, c.id DESC
) h ON h.event_id = e.id
LEFT JOIN memory_evaluation ev ON ev.id = e.evaluation_id
WHERE e.context_id = %(ctx)s AND e.seq <= %(seq)s

-- name: relations_at
SELECT r.id, r.context_id, r.subject_id, r.name, r.object_id, r.created_version,
       CASE WHEN r.removed_version <= %(v)s THEN r.removed_version END AS removed_version
FROM memory_relation r
WHERE r.context_id = %(ctx)s AND r.created_version <= %(v)s

-- name: context_at
SELECT c.id, c.slug, c.name, %(v)s AS version, %(tick)s AS tick, %(seq)s AS last_seq,
       coalesce((st.s->>'grace_ticks')::int, c.grace_ticks) AS grace_ticks,
       coalesce((st.s->>'capacity_tokens')::int, c.capacity_tokens) AS capacity_tokens,
       coalesce((st.s->>'pressure_percent')::int, c.pressure_percent) AS pressure_percent,
       coalesce((st.s->>'maintenance_percent')::int, c.maintenance_percent)
         AS maintenance_percent,
       coalesce((st.s->>'maintenance_exit_percent')::int, c.maintenance_exit_percent)
         AS maintenance_exit_percent,
       (SELECT coalesce(sum(f.token_estimate), 0) FROM ({{> frames_at}}) f
        WHERE f.status IN ('active', 'retiring'))
       + (SELECT coalesce(sum(e.token_estimate), 0) FROM ({{> events_at}}) e WHERE e.active)
         AS used_tokens,
       coalesce((SELECT m.in_maintenance FROM memory_maintenancechange m
                 WHERE m.context_id = c.id AND m.last_seq <= %(seq)s
                 ORDER BY m.id DESC LIMIT 1), false) AS in_maintenance,
       c.created_at, c.frozen, c.forked_from_id, c.forked_version, c.forked_tick,
       coalesce((st.s->>'observation_budget_tokens')::int, c.observation_budget_tokens)
         AS observation_budget_tokens
FROM memory_context c
LEFT JOIN LATERAL (
  SELECT g.settings AS s FROM memory_settingschange g
  WHERE g.context_id = c.id AND g.version <= %(v)s ORDER BY g.version DESC, g.id DESC LIMIT 1
) st ON true
WHERE c.id = %(ctx)s

-- name: view_context_at
-- Recall as of a point (memory.versions.asof.recall_as_of) reads temporary views of these
-- names, created in this order (each body still names the real tables: a view's names are
-- resolved when it is created), with the point's numbers written in (views take no
-- parameters).
CREATE TEMP VIEW memory_context AS {{> context_at}}

-- name: view_relations_at
CREATE TEMP VIEW memory_relation AS {{> relations_at}}

-- name: view_events_at
CREATE TEMP VIEW memory_event AS {{> events_at}}

-- name: view_frames_at
CREATE TEMP VIEW memory_frame AS {{> frames_view_at}}

-- The comparable state of a context (memory.versions.snapshot): no ids, no clock times.

-- name: snapshot_frames
SELECT {{frame_loaded_text}} FROM memory_frame WHERE context_id = %s ORDER BY frame_id

-- name: snapshot_revisions
SELECT r.frame_id, r.revision, r.body::text AS body, r.sources::text AS sources, r.version
FROM memory_framerevision r JOIN memory_frame f ON f.id = r.frame_id
WHERE f.context_id = %s ORDER BY r.frame_id, r.revision

-- name: snapshot_retirements
SELECT q.frame_id, q.generation, q.requested_tick, q.due_tick, q.reason,
       q.requested_version, q.outcome, q.resolved_tick, q.resolved_version
FROM memory_retirementrequest q JOIN memory_frame f ON f.id = q.frame_id
WHERE f.context_id = %s ORDER BY q.frame_id, q.generation

-- name: snapshot_relations
SELECT s.frame_id AS subject, r.name, o.frame_id AS object, r.created_version,
       r.removed_version
FROM memory_relation r JOIN memory_frame s ON s.id = r.subject_id
JOIN memory_frame o ON o.id = r.object_id WHERE r.context_id = %s
ORDER BY s.frame_id, r.name, o.frame_id, r.created_version

-- name: snapshot_events
SELECT seq, kind, thread, md5(content) AS content_md5, active, status_version, pending,
       request_state, delivered_by_seq, delivers, evaluation_id, token_estimate
FROM memory_event WHERE context_id = %s ORDER BY seq

-- name: snapshot_maintenance
SELECT version, last_seq, in_maintenance FROM memory_maintenancechange
WHERE context_id = %s ORDER BY id

-- name: snapshot_settings
SELECT kind, version, last_seq, evaluations, settings::text AS settings
FROM memory_settingschange WHERE context_id = %s ORDER BY id

-- name: diff_frames
-- What changed between the end of version %(a)s and the end of %(b)s (memory.versions.diff,
-- these diff_ statements; %(sa)s and %(sb)s are the last event seqs at those points): each
-- frame changed in between, with its state at both points (none at %(a)s if newer).
WITH touched AS (
  SELECT DISTINCT c.frame_id FROM memory_framechange c
  WHERE c.context_id = %(ctx)s AND c.version > %(a)s AND c.version <= %(b)s
)
SELECT f.frame_id, f.created_version,
       ha.revision AS revision_a, ha.status AS status_a, ha.protected AS protected_a,
       ra.body AS body_a,
       hb.revision AS revision_b, hb.status AS status_b, hb.protected AS protected_b,
       rb.body AS body_b, hb.retire_due_tick AS due_tick_b
FROM touched t JOIN memory_frame f ON f.id = t.frame_id
LEFT JOIN LATERAL (
  SELECT c.* FROM memory_framechange c WHERE c.frame_id = f.id AND c.version <= %(a)s
  ORDER BY c.version DESC, c.id DESC LIMIT 1
) ha ON true
LEFT JOIN memory_framerevision ra ON ra.frame_id = f.id AND ra.revision = ha.revision
CROSS JOIN LATERAL (
  SELECT c.* FROM memory_framechange c WHERE c.frame_id = f.id AND c.version <= %(b)s
  ORDER BY c.version DESC, c.id DESC LIMIT 1
) hb
JOIN memory_framerevision rb ON rb.frame_id = f.id AND rb.revision = hb.revision
ORDER BY f.frame_id

-- name: diff_relations
SELECT s.frame_id AS subject, r.name, o.frame_id AS object, r.created_version,
       r.removed_version
FROM memory_relation r JOIN memory_frame s ON s.id = r.subject_id
JOIN memory_frame o ON o.id = r.object_id
WHERE r.context_id = %(ctx)s AND (
  (r.created_version > %(a)s AND r.created_version <= %(b)s)
  OR (r.removed_version > %(a)s AND r.removed_version <= %(b)s))
ORDER BY r.id

-- name: diff_appended
SELECT e.seq, e.kind, e.thread, left(e.content, %(preview)s) AS preview
FROM memory_event e WHERE e.context_id = %(ctx)s AND e.seq > %(sa)s AND e.seq <= %(sb)s
ORDER BY e.seq

-- name: diff_event_states
-- Each event retired or restored in between: whether it was active at both points.
WITH touched AS (
  SELECT DISTINCT c.event_id FROM memory_eventchange c
  WHERE c.context_id = %(ctx)s AND c.version > %(a)s AND c.version <= %(b)s
)
SELECT e.seq,
       CASE WHEN e.seq > %(sa)s THEN true ELSE coalesce(
         (SELECT c.active FROM memory_eventchange c WHERE c.event_id = e.id
          AND c.version <= %(a)s ORDER BY c.version DESC, c.id DESC LIMIT 1), true) END
         AS active_a,
       coalesce((SELECT c.active FROM memory_eventchange c WHERE c.event_id = e.id
          AND c.version <= %(b)s ORDER BY c.version DESC, c.id DESC LIMIT 1), true)
         AS active_b
FROM touched t JOIN memory_event e ON e.id = t.event_id
WHERE e.seq <= %(sb)s
ORDER BY e.seq

-- name: diff_transactions
SELECT t.committed_version AS version, t.id, e.seq, t.reason, t.author, t.author_kind,
       t.thread, t.base_version, t.text
FROM memory_transactionrecord t LEFT JOIN memory_event e ON e.id = t.event_id
WHERE t.context_id = %(ctx)s AND t.committed_version > %(a)s AND t.committed_version <= %(b)s
ORDER BY t.committed_version

-- name: point_of_version
-- Where version %(v)s ends: the event of the commit that made version %(v)s + 1 (the last
-- seq before it), its record id (records before it existed) and the last tick evaluated.
SELECT e.seq AS next_seq, t.id AS record_id,
       (SELECT coalesce(max(v.tick), 0) FROM memory_evaluation v
        WHERE v.context_id = %(ctx)s AND v.view_version <= %(v)s) AS tick
FROM memory_transactionrecord t JOIN memory_event e ON e.id = t.event_id
WHERE t.context_id = %(ctx)s AND t.committed_version = %(v)s + 1

-- name: share_context
-- Writers of the context (which take FOR UPDATE) wait until this transaction ends.
SELECT id FROM memory_context WHERE id = %(ctx)s FOR SHARE

-- name: restore_event_times
-- Imported events keep the times they were first appended at.
UPDATE memory_event AS e SET created_at = v.t::timestamptz
FROM unnest(%(seqs)s::bigint[], %(times)s::text[]) AS v(seq, t)
WHERE e.context_id = %(ctx)s AND e.seq = v.seq

-- name: restore_transaction_times
-- Imported commits keep their times: a commit's is its event's (restored just before).
UPDATE memory_transactionrecord AS t SET created_at = e.created_at
FROM memory_event AS e
WHERE t.context_id = %(ctx)s AND t.status = 'committed' AND e.id = t.event_id

-- name: restore_evaluation_times
-- Imported evaluations keep their times; the file names one by its ordinal (0 the first).
UPDATE memory_evaluation AS e SET created_at = v.t::timestamptz
FROM (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n
      FROM memory_evaluation WHERE context_id = %(ctx)s) AS o,
     unnest(%(ordinals)s::bigint[], %(times)s::text[]) AS v(n, t)
WHERE e.id = o.id AND o.n = v.n

-- name: restore_transaction_keys
-- Imported commits keep their idempotency keys: a retry after a restore gets its receipt.
UPDATE memory_transactionrecord AS t SET idempotency_key = v.k, request_hash = v.h
FROM unnest(%(versions)s::bigint[], %(keys)s::text[], %(hashes)s::text[]) AS v(version, k, h)
WHERE t.context_id = %(ctx)s AND t.committed_version = v.version

-- name: synchronous_commit_local
SET LOCAL synchronous_commit = on

-- name: synchronous_commit_off
SET synchronous_commit = off

-- name: synchronous_commit_reset
RESET synchronous_commit

-- name: repeatable_read
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ

-- name: copying_on
-- Triggers that log changes skip the rows a fork copies (their logs are copied too).
SET LOCAL morphz.copying = 'on'

-- name: copying_off
SET LOCAL morphz.copying = 'off'

-- name: scratch_lock
SELECT pg_advisory_lock(%(class)s, %(ctx)s)

-- name: scratch_try_lock
SELECT pg_try_advisory_lock(%(class)s, %(ctx)s) AS locked

-- name: scratch_unlock
SELECT pg_advisory_unlock(%(class)s, %(ctx)s)

-- name: purge_retirementrequest
-- Purging a scratch context (memory.versions.replay.purge_scratch, these purge_ statements
-- in its order: children first, the index intents before the documents).
DELETE FROM memory_retirementrequest q USING memory_frame f
WHERE q.frame_id = f.id AND f.context_id = %(c)s

-- name: purge_framerevision
DELETE FROM memory_framerevision r USING memory_frame f
WHERE r.frame_id = f.id AND f.context_id = %(c)s

-- name: purge_indexintent
DELETE FROM memory_indexintent WHERE context_id = %(c)s

-- name: purge_searchpart
DELETE FROM memory_searchpart WHERE context_id = %(c)s

-- name: purge_searchdocument
DELETE FROM memory_searchdocument WHERE context_id = %(c)s

-- name: purge_searchlanguage
DELETE FROM memory_searchlanguage WHERE context_id = %(c)s

-- name: purge_framechange
DELETE FROM memory_framechange WHERE context_id = %(c)s

-- name: purge_eventchange
DELETE FROM memory_eventchange WHERE context_id = %(c)s

-- name: purge_maintenancechange
DELETE FROM memory_maintenancechange WHERE context_id = %(c)s

-- name: purge_settingschange
DELETE FROM memory_settingschange WHERE context_id = %(c)s

-- name: purge_relation
DELETE FROM memory_relation WHERE context_id = %(c)s

-- name: purge_frame
DELETE FROM memory_frame WHERE context_id = %(c)s

-- name: purge_transactionrecord
DELETE FROM memory_transactionrecord WHERE context_id = %(c)s

-- name: purge_event
DELETE FROM memory_event WHERE context_id = %(c)s

-- name: purge_evaluation
DELETE FROM memory_evaluation WHERE context_id = %(c)s

-- name: purge_apitoken
DELETE FROM memory_apitoken WHERE context_id = %(c)s

-- name: purge_forked_from
UPDATE memory_context SET forked_from_id = NULL WHERE forked_from_id = %(c)s

-- name: purge_context
DELETE FROM memory_context WHERE id = %(c)s

-- name: fork_drop_maps
-- Copying a context into its fork (memory.versions.fork_copy names these fork_ statements
-- in their order; %(dst)s is the new context's id). The id maps are dropped first too:
-- inside an enclosing transaction ON COMMIT comes later.
DROP TABLE IF EXISTS fork_eval, fork_event, fork_record, fork_frame

-- name: fork_map_evaluations
-- id maps: old id -> new id, drawn from each table's own sequence in the old ids' order
-- (evaluations and records are ordered by id)
CREATE TEMP TABLE fork_eval ON COMMIT DROP AS
SELECT id AS old, nextval(pg_get_serial_sequence('memory_evaluation', 'id')) AS new
FROM (SELECT id FROM memory_evaluation WHERE context_id = %(ctx)s
AND view_version <= %(v)s ORDER BY id) s

-- name: fork_map_events
CREATE TEMP TABLE fork_event ON COMMIT DROP AS
SELECT id AS old, nextval(pg_get_serial_sequence('memory_event', 'id')) AS new
FROM (SELECT id FROM memory_event WHERE context_id = %(ctx)s AND seq <= %(seq)s
ORDER BY seq) s

-- name: fork_map_records
CREATE TEMP TABLE fork_record ON COMMIT DROP AS
SELECT id AS old, nextval(pg_get_serial_sequence('memory_transactionrecord', 'id')) AS new
FROM (SELECT id FROM memory_transactionrecord WHERE context_id = %(ctx)s
AND (committed_version <= %(v)s OR (committed_version IS NULL AND id < %(rec)s))
ORDER BY id) s

-- name: fork_map_frames
CREATE TEMP TABLE fork_frame ON COMMIT DROP AS
SELECT id AS old, nextval(pg_get_serial_sequence('memory_frame', 'id')) AS new
FROM (SELECT id FROM memory_frame WHERE context_id = %(ctx)s
AND created_version <= %(v)s ORDER BY id) s

-- name: fork_analyze_maps
ANALYZE fork_eval, fork_event, fork_record, fork_frame

-- name: fork_evaluations
-- The stored result is copied as is (rewriting its `id` decompressed every large compiled
-- input: most of a fork's time); readers take the id from the row.
INSERT INTO memory_evaluation (id, context_id, thread, idempotency_key, continuation,
tick, advanced_tick, view_version, claimed_seqs, last_seq, result, created_at)
SELECT m.new, %(dst)s, v.thread, v.idempotency_key, v.continuation, v.tick,
v.advanced_tick, v.view_version, v.claimed_seqs, v.last_seq, v.result, v.created_at
FROM memory_evaluation v JOIN fork_eval m ON m.old = v.id

-- name: fork_events_prefix
-- Events as of the point: this prefix, then the rows (fork_events_now or _at).
INSERT INTO memory_event (id, context_id, seq, kind, thread, content, payload,
created_at, idempotency_key, size_chars, token_estimate, is_observation, active,
status_version, pending, evaluation_id, delivers, request_state, delivered_by_seq)
SELECT m.new, %(dst)s, e.seq, e.kind, e.thread, e.content, e.payload, e.created_at,
e.idempotency_key, e.size_chars, e.token_estimate, e.is_observation, e.active,
e.status_version, e.pending, me.new, e.delivers, e.request_state, e.delivered_by_seq

-- name: fork_events_now
{{> fork_events_prefix}}
FROM ({{> events_now}}) e JOIN fork_event m ON m.old = e.id
LEFT JOIN fork_eval me ON me.old = e.evaluation_id

-- name: fork_events_at
{{> fork_events_prefix}}
FROM ({{> events_at}}) e JOIN fork_event m ON m.old = e.id
LEFT JOIN fork_eval me ON me.old = e.evaluation_id

-- name: fork_records
INSERT INTO memory_transactionrecord (id, context_id, author, author_kind, thread,
base_version, committed_version, status, reason, text, ops, receipt, errors,
frame_ids, event_id, evaluation_id, created_at, idempotency_key, request_hash)
SELECT m.new, %(dst)s, t.author, t.author_kind, t.thread, t.base_version,
t.committed_version, t.status, t.reason, t.text, t.ops, t.receipt, t.errors,
t.frame_ids, me.new, mv.new, t.created_at, t.idempotency_key, t.request_hash
FROM memory_transactionrecord t JOIN fork_record m ON m.old = t.id
LEFT JOIN fork_event me ON me.old = t.event_id
LEFT JOIN fork_eval mv ON mv.old = t.evaluation_id

-- name: fork_frames_now
-- Frames as of the point, then their revisions, logs, relations and retirement requests.
INSERT INTO memory_frame ({{frame_all}})
SELECT m.new, %(dst)s, {{f.frame_copied}}
FROM ({{> frames_now}}) f JOIN fork_frame m ON m.old = f.id

-- name: fork_frames_at
INSERT INTO memory_frame ({{frame_all}})
SELECT m.new, %(dst)s, {{f.frame_copied}}
FROM ({{> frames_at}}) f JOIN fork_frame m ON m.old = f.id

-- name: fork_revisions
INSERT INTO memory_framerevision (frame_id, revision, body, sources, transaction_id,
version, created_at)
SELECT mf.new, r.revision, r.body, r.sources, mt.new, r.version, r.created_at
FROM memory_framerevision r JOIN fork_frame mf ON mf.old = r.frame_id
JOIN fork_record mt ON mt.old = r.transaction_id WHERE r.version <= %(v)s

-- name: fork_frame_changes
INSERT INTO memory_framechange (context_id, frame_id, version, {{frame_logged}})
SELECT %(dst)s, mf.new, c.version, {{c.frame_logged}}
FROM memory_framechange c JOIN fork_frame mf ON mf.old = c.frame_id
WHERE c.version <= %(v)s ORDER BY c.id

-- name: fork_event_changes
INSERT INTO memory_eventchange (context_id, event_id, seq, version, active)
SELECT %(dst)s, me.new, c.seq, c.version, c.active FROM memory_eventchange c
JOIN fork_event me ON me.old = c.event_id WHERE c.version <= %(v)s ORDER BY c.id

-- name: fork_settings_changes
INSERT INTO memory_settingschange (context_id, kind, version, last_seq, evaluations,
settings, created_at) SELECT %(dst)s, kind, version, last_seq, evaluations, settings,
created_at FROM memory_settingschange WHERE context_id = %(ctx)s AND version <= %(v)s
ORDER BY id

-- name: fork_maintenance_changes
INSERT INTO memory_maintenancechange (context_id, version, last_seq, in_maintenance)
SELECT %(dst)s, version, last_seq, in_maintenance FROM memory_maintenancechange
WHERE context_id = %(ctx)s AND last_seq <= %(seq)s ORDER BY id

-- name: fork_relations_prefix
INSERT INTO memory_relation (context_id, subject_id, name, object_id,
created_version, removed_version)
SELECT %(dst)s, ms.new, r.name, mo.new, r.created_version, r.removed_version

-- name: fork_relations_now
{{> fork_relations_prefix}}
FROM ({{> relations_now}}) r JOIN fork_frame ms ON ms.old = r.subject_id
JOIN fork_frame mo ON mo.old = r.object_id ORDER BY r.id

-- name: fork_relations_at
{{> fork_relations_prefix}}
FROM ({{> relations_at}}) r JOIN fork_frame ms ON ms.old = r.subject_id
JOIN fork_frame mo ON mo.old = r.object_id ORDER BY r.id

-- name: fork_retirements
INSERT INTO memory_retirementrequest (frame_id, generation, requested_tick, due_tick,
reason, requested_version, outcome, resolved_tick, resolved_version)
SELECT mf.new, q.generation, q.requested_tick, q.due_tick, q.reason,
q.requested_version,
CASE WHEN q.resolved_version > %(v)s THEN 'pending' ELSE q.outcome END,
CASE WHEN q.resolved_version > %(v)s THEN NULL ELSE q.resolved_tick END,
CASE WHEN q.resolved_version > %(v)s THEN NULL ELSE q.resolved_version END
FROM memory_retirementrequest q JOIN fork_frame mf ON mf.old = q.frame_id
WHERE q.requested_version <= %(v)s

-- name: fork_event_documents
-- The search index: documents whose facts read the same at the point are copied (one
-- indexed in parts is indexed again in the fork: few, and its parts stay one write).
-- {column} and {value}: pgvector's copy of each embedding, where the server has it.
INSERT INTO memory_searchdocument (context_id, frame_id, event_id, ref, status, kind,
thread, created_at, tokens, length, embedding, embedding_model, indexed_at{column})
SELECT %(dst)s, NULL, me.new, d.ref,
CASE WHEN e.is_observation THEN CASE WHEN e.active THEN 'active' ELSE 'retired' END
ELSE 'recorded' END, d.kind, d.thread, d.created_at, d.tokens, d.length, d.embedding,
d.embedding_model, d.indexed_at{value}
FROM memory_searchdocument d JOIN fork_event me ON me.old = d.event_id
JOIN memory_event e ON e.id = me.new WHERE d.parts = 0

-- name: fork_frame_documents
INSERT INTO memory_searchdocument (context_id, frame_id, event_id, ref, status, kind,
thread, created_at, tokens, length, embedding, embedding_model, indexed_at{column})
SELECT %(dst)s, mf.new, NULL, d.ref, f.status, d.kind, d.thread, d.created_at,
d.tokens, d.length, d.embedding, d.embedding_model, d.indexed_at{value}
FROM memory_searchdocument d JOIN fork_frame mf ON mf.old = d.frame_id
JOIN memory_frame f ON f.id = mf.new JOIN memory_frame s ON s.id = d.frame_id
WHERE s.revision = f.revision AND d.parts = 0

-- name: fork_search_languages
-- The languages a search stems its query in (`memory.search.languages.held`): the source's,
-- so the copied documents' stems are searched at once. A fork at an earlier point may get
-- a language only later documents hold: that only costs its queries the stems in it. The
-- documents indexed again in the fork (below) add theirs when the indexer writes them.
INSERT INTO memory_searchlanguage (context_id, language)
SELECT %(dst)s, language FROM memory_searchlanguage WHERE context_id = %(ctx)s
ORDER BY language

-- name: fork_frame_intents
-- Whatever has no document yet (changed since, or not indexed in the source either).
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT %(dst)s, f.id, NULL, now() FROM memory_frame f
WHERE f.context_id = %(dst)s AND NOT EXISTS
(SELECT 1 FROM memory_searchdocument d WHERE d.frame_id = f.id)

-- name: fork_event_intents
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT %(dst)s, NULL, e.id, now() FROM memory_event e
WHERE e.context_id = %(dst)s AND NOT EXISTS
(SELECT 1 FROM memory_searchdocument d WHERE d.event_id = e.id)

-- name: fork_drop_map_tables
DROP TABLE fork_eval, fork_event, fork_record, fork_frame
