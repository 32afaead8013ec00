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
