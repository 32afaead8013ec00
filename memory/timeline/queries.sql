-- Writing events (memory.timeline.inserts): one statement inserts the events, their search
-- index intents and the context's new counters. Callers hold the context row lock.

-- name: insert_event
WITH ev AS (
  INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at,
    idempotency_key, size_chars, token_estimate, is_observation, active, status_version,
    pending, delivers, request_state)
  VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, 0, %s, %s::bigint[], %s)
  RETURNING id),
intent AS (INSERT INTO memory_indexintent (context_id, event_id, created_at)
  SELECT %s, id, %s FROM ev),
ctx AS (UPDATE memory_context SET last_seq = %s, used_tokens = %s, in_maintenance = %s
  WHERE id = %s)
SELECT id FROM ev

-- name: insert_events
-- One array per column, unnested into rows, sent in binary apart from the SQL: the
-- statement's text and its parameter count stay the same for any batch size (a VALUES row
-- per event made psycopg scan a query of 8,000 placeholders and quote every value into it).
WITH ev AS (
  INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at,
    idempotency_key, size_chars, token_estimate, is_observation, active, status_version,
    pending, delivers, request_state, delivered_by_seq)
  SELECT %s, seq, kind, thread, content, payload::jsonb, created_at, idempotency_key,
    size_chars, token_estimate, is_observation, active, 0, pending, delivers::bigint[],
    request_state, delivered_by_seq
  FROM unnest(%b::bigint[], %b::text[], %b::text[], %b::text[], %b::text[],
    %b::timestamptz[], %b::text[], %b::bigint[], %b::bigint[], %b::boolean[], %b::boolean[],
    %b::boolean[], %b::text[], %b::text[], %b::bigint[]) WITH ORDINALITY
    AS r(seq, kind, thread, content, payload, created_at, idempotency_key, size_chars,
      token_estimate, is_observation, active, pending, delivers, request_state,
      delivered_by_seq, position)
  ORDER BY position
  RETURNING id, seq),
intent AS (INSERT INTO memory_indexintent (context_id, event_id, created_at)
  SELECT %s, id, %s FROM ev),
ctx AS (UPDATE memory_context SET last_seq = %s, used_tokens = %s, in_maintenance = %s
  WHERE id = %s)
SELECT id, seq FROM ev

-- name: compile_frames
-- The reads of a compile (memory.timeline.compile), by hand: Django's row building cost
-- more than the reads. Live frames: the partial index `frame_live_idx` matches
-- `NOT (status = 'retired')`.
SELECT id, frame_id, revision, status, protected, body::text AS body, sources::text AS sources,
       token_estimate, retire_due_tick, retire_requested_tick, retire_reason
FROM memory_frame
WHERE context_id = %s AND NOT (status = 'retired') ORDER BY created_version, frame_id

-- name: compile_dropped_fields
-- For revisions (frame row id, revision > 1), the keys of the body before that the revision
-- left out, and its version (R59: fields dropped by a revise).
SELECT c.frame_id AS frame_pk, c.revision, c.version,
       ARRAY(SELECT k FROM json_object_keys(p.body) AS k WHERE (c.body -> k) IS NULL) AS fields
FROM unnest(%s::bigint[], %s::bigint[]) AS w(id, rev)
JOIN memory_framerevision c ON c.frame_id = w.id AND c.revision = w.rev
JOIN memory_framerevision p ON p.frame_id = w.id AND p.revision = w.rev - 1
WHERE json_typeof(p.body) = 'object' AND json_typeof(c.body) = 'object'

-- name: compile_observations
-- Active observations (`event_active_idx`), only as much text as a preview can show: the
-- first and the last characters.
SELECT seq, kind, thread, substring(content, 1, %s) AS head, right(content, %s) AS tail,
       size_chars, token_estimate, request_state, delivers
FROM memory_event WHERE context_id = %s AND active ORDER BY seq

-- name: compile_relations
-- Live relations between live frames.
SELECT s.frame_id AS subject, r.name, o.frame_id AS object FROM memory_relation r
JOIN memory_frame s ON s.id = r.subject_id JOIN memory_frame o ON o.id = r.object_id
WHERE r.context_id = %s AND r.removed_version IS NULL AND NOT (s.status = 'retired')
AND NOT (o.status = 'retired') ORDER BY r.id

-- name: compile_actions
-- With each pending action, the ticks since it was registered: the evaluations that
-- advanced the tick with the action already in the history (R59, stale actions).
SELECT e.seq, e.thread, e.payload::text AS payload,
       (SELECT count(*) FROM memory_evaluation v
        WHERE v.context_id = e.context_id AND v.advanced_tick AND v.last_seq >= e.seq) AS ticks
FROM memory_event e WHERE e.context_id = %s AND e.request_state = %s AND e.kind = %s
ORDER BY e.seq

-- name: compile_last_sent
-- For each thread with an open request, the agent's last message on it (event_thread_idx
-- read backwards from the thread's end). Constants written in: a generic plan of a
-- prepared statement cannot use the partial index for a state given as a parameter.
SELECT t.thread, m.seq, substring(m.content, 1, %s) AS text
FROM (SELECT DISTINCT thread FROM memory_event WHERE context_id = %s AND active
      AND request_state = 'open' AND kind = 'user_message') t
CROSS JOIN LATERAL (SELECT seq, content FROM memory_event
  WHERE context_id = %s AND thread = t.thread AND kind = 'agent_message'
  ORDER BY seq DESC LIMIT 1) m
