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
