-- The commit path's statements (memory.tx.loader, memory.tx.store). Column lists in
-- {{...}} come from memory.sql.columns. The load and the write are prepared statements.

-- name: frames_by_id
SELECT {{frame_loaded}} FROM memory_frame WHERE context_id = %s AND frame_id = ANY(%s)

-- name: index_lookups_only
-- The load is prepared, so its plan is kept for the connection's life, until ANALYZE
-- changes the statistics (never inside one long transaction: an import, a replay). A plan
-- made while the tables held a page or two would read the whole table once per name, so
-- the load is planned with sequential scans off. The setting stays off for the rest of the
-- commit's database transaction: everything after the load looks rows up by a key too, and
-- PostgreSQL's deferred foreign-key checks, planned while statistics called the tables
-- empty, read the whole referenced table for each row: in a young database that made the
-- first minute of commits 2-5 times slower (tests/memory/test_commit_keys_checked_by_index.py).
SET LOCAL enable_seqscan = off

-- name: load
-- Frames, events and relations in one statement, one result: a document of rows (arrays
-- in the registry's column order). Each name is looked up on its own, by equality on a
-- key. For a relation ([subject, name, object]) every row of it, current and past: the
-- subject and the object by their unique keys first, then the relation's rows by the
-- subject's id; `OFFSET 0` keeps each step a subquery of its own so the planner cannot
-- join them in another order (tests/memory/test_commit_load_with_empty_statistics.py).
SELECT jsonb_build_object(
  'frames', (SELECT coalesce(jsonb_agg(e), '[]')
    FROM jsonb_array_elements_text(names.d->'frames') AS k(t),
      LATERAL (SELECT k.t::text AS v) AS c,
      LATERAL jsonb_array_elements(coalesce((
        SELECT jsonb_agg(jsonb_build_array({{frame_loaded_text}}))
        FROM memory_frame WHERE context_id = ctx.id AND frame_id = c.v), '[]')) AS e),
  'events', (SELECT coalesce(jsonb_agg(e), '[]')
    FROM jsonb_array_elements_text(names.d->'seqs') AS k(t),
      LATERAL (SELECT k.t::bigint AS v) AS c,
      LATERAL jsonb_array_elements(coalesce((
        SELECT jsonb_agg(jsonb_build_array({{event_loaded}}))
        FROM memory_event WHERE context_id = ctx.id AND seq = c.v), '[]')) AS e),
  'relations', (SELECT coalesce(jsonb_agg(e), '[]')
    FROM jsonb_array_elements(names.d->'relations') AS k(t),
      LATERAL jsonb_array_elements(coalesce((
        SELECT jsonb_agg(jsonb_build_array(r.id, s.frame_id, r.name, o.frame_id,
          r.created_version, r.removed_version))
        FROM (SELECT id, frame_id FROM memory_frame
              WHERE context_id = ctx.id AND frame_id = k.t->>0 OFFSET 0) s
        CROSS JOIN LATERAL (SELECT id, frame_id FROM memory_frame
              WHERE context_id = ctx.id AND frame_id = k.t->>2 OFFSET 0) o
        CROSS JOIN LATERAL (SELECT id, name, created_version, removed_version
              FROM memory_relation WHERE subject_id = s.id AND object_id = o.id
              AND name = k.t->>1 OFFSET 0) r), '[]')) AS e))
FROM (SELECT %s::bigint AS id) AS ctx, (SELECT %s::jsonb AS d) AS names

-- name: supersedes_into
SELECT s.frame_id AS subject, o.frame_id AS object FROM memory_relation r
JOIN memory_frame s ON s.id = r.subject_id JOIN memory_frame o ON o.id = r.object_id
WHERE r.context_id = %s AND r.name = %s AND r.removed_version IS NULL AND o.frame_id = ANY(%s)

-- name: write_commit
-- memory/sql/functions/morphz_write_commit_v2.sql
SELECT morphz_write_commit(%s::jsonb) AS record_id
