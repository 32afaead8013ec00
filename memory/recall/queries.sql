-- Graph recall's statements (memory.recall.rows, memory.recall.walk). The first page is one
-- statement per direction (`first_page_ancestors`, `_descendants`, `_both`), put together
-- from the parts below; how it walks: docs/internals.md, `memory/recall/statements.py`.
-- Parameters are named (`%(ctx)s`): the first page runs prepared with the types of
-- memory.recall.statements.PARAM_TYPES.

-- name: walk_open
-- The walk: one recursive step per level, carrying the visited set in arrays, each level
-- LIMITed to what the page still needs. A level's frame ids come next (`level_frame_ids`,
-- or `no_frame_ids` when no part needs them). The root is the frame `root` or, when `root`
-- is an event ref, the event `seq` (its "frame id" is the ref, which citing frames hold).
WITH RECURSIVE walk(level, kinds, ids, fids, seen_f, seen_e, total) AS (
  SELECT 0, r.kinds, r.ids, r.fids, r.seen_f, r.seen_e, 1 FROM (
    SELECT ARRAY['f'] AS kinds, ARRAY[f.id] AS ids, ARRAY[f.frame_id::text] AS fids,
           ARRAY[f.id] AS seen_f, '{}'::bigint[] AS seen_e
    FROM memory_frame f WHERE f.context_id = %(ctx)s AND f.frame_id = %(root)s
    UNION ALL
    SELECT ARRAY['e'], ARRAY[e.seq], ARRAY[%(root)s::text], '{}'::bigint[], ARRAY[e.seq]
    FROM memory_event e WHERE e.context_id = %(ctx)s AND e.seq = %(seq)s
  ) AS r
  UNION ALL
  SELECT w.level + 1, nx.kinds, nx.ids, nx.fids, w.seen_f || coalesce(nx.new_f, '{}'),
         w.seen_e || coalesce(nx.new_e, '{}'), w.total + cardinality(nx.ids)
  FROM walk w
  CROSS JOIN LATERAL (
    SELECT array_agg(c.kind ORDER BY c.pos, c.grp, c.ord) AS kinds,
           array_agg(c.other ORDER BY c.pos, c.grp, c.ord) AS ids,

-- name: level_frame_ids
-- Only `descendants` needs the frame ids of a level (to find the frames citing them).
array_agg(nf.frame_id::text ORDER BY c.pos, c.grp, c.ord) AS fids,

-- name: no_frame_ids
array_fill(NULL::text, ARRAY[count(*)::int]) AS fids,

-- name: walk_gather
-- A level's new nodes: the parts of its direction follow, joined by UNION ALL.
           array_agg(c.other) FILTER (WHERE c.kind = 'f') AS new_f,
           array_agg(c.other) FILTER (WHERE c.kind = 'e') AS new_e
    FROM (
      SELECT u.* FROM (
        -- each new node once, at its first place in the walk order
        SELECT DISTINCT ON (n.kind, n.other) n.kind, n.other, p.pos, n.grp, n.ord
        FROM unnest(w.ids, w.kinds, w.fids) WITH ORDINALITY AS p(pk, kind, fid, pos)
        CROSS JOIN LATERAL (

-- name: walk_sources
-- The parts: group numbers fix the order of neighbours within one parent; each part skips
-- nodes already seen on earlier levels and is LIMITed, so a parent with a huge fan-out
-- costs at most `cap` rows. `p` is the parent (pk, frame id), `w` the walk so far. Only
-- the citing frames follow an event parent (the root event): the other parts look up
-- `p.pk`, which for an event is its seq, so they run for frame parents only.
(SELECT 0 AS grp, s.i AS ord, k.kind, k.other
   FROM memory_frame src
   CROSS JOIN LATERAL jsonb_array_elements_text(src.sources) WITH ORDINALITY AS s(ref, i)
   CROSS JOIN LATERAL (SELECT s.ref ~ '^@e[0-9]+$') AS t(is_event)
   -- LIMIT keeps this a per-source index lookup whatever the statistics say (a join here
   -- became a hash of the whole frame table while a freshly loaded table had no statistics)
   LEFT JOIN LATERAL (
     SELECT f2.id FROM memory_frame f2
     WHERE NOT t.is_event AND f2.context_id = %(ctx)s AND f2.frame_id = s.ref LIMIT 1
   ) AS f2 ON true
   CROSS JOIN LATERAL (SELECT CASE WHEN t.is_event THEN 'e' ELSE 'f' END,
                              CASE WHEN t.is_event THEN substr(s.ref, 3)::bigint ELSE f2.id END
                      ) AS k(kind, other)
   WHERE p.kind = 'f' AND src.id = p.pk AND k.other IS NOT NULL
     AND k.other <> ALL(CASE WHEN k.kind = 'f' THEN w.seen_f ELSE w.seen_e END)
   ORDER BY s.i LIMIT %(cap)s)

-- name: walk_out_relations
(SELECT 1 AS grp, r.id AS ord, 'f' AS kind, r.object_id AS other
   FROM memory_relation r
   WHERE p.kind = 'f' AND r.subject_id = p.pk AND r.removed_version IS NULL
     AND r.object_id <> ALL(w.seen_f)
   ORDER BY r.id LIMIT %(cap)s)

-- name: walk_citing_frames
(SELECT 2 AS grp, f.id AS ord, 'f' AS kind, f.id AS other FROM memory_frame f
   WHERE f.context_id = %(ctx)s AND f.sources ? p.fid AND f.id <> ALL(w.seen_f)
   ORDER BY f.id LIMIT %(cap)s)

-- name: walk_in_relations
(SELECT 3 AS grp, r.id AS ord, 'f' AS kind, r.subject_id AS other
   FROM memory_relation r
   WHERE p.kind = 'f' AND r.object_id = p.pk AND r.removed_version IS NULL
     AND r.subject_id <> ALL(w.seen_f)
   ORDER BY r.id LIMIT %(cap)s)

-- name: walk_close
-- A level's end; `level_frame_join` follows when the level's frame ids are needed. Events
-- are leaves, but for the root event (level 0), whose citing frames follow it.
        ) AS n
        WHERE p.kind = 'f' OR w.level = 0
        ORDER BY n.kind, n.other, p.pos, n.grp, n.ord
      ) AS u
      ORDER BY u.pos, u.grp, u.ord
      LIMIT %(target)s - w.total
    ) AS c

-- name: level_frame_join
LEFT JOIN memory_frame nf ON c.kind = 'f' AND nf.id = c.other

-- name: first_page_rows
-- The nodes in walk order (`n`) with the columns of the page's candidates (n in [lo, hi)),
-- after one row n = -1 that alone holds the context's cognitive `version` and the
-- `relations` between the page and the earlier frames (a JSON array of
-- [id, subject_id, name, object_id]).
  ) AS nx
  WHERE w.level < %(depth)s AND w.total < %(target)s AND nx.ids IS NOT NULL
),
nodes AS (
  SELECT row_number() OVER (ORDER BY w.level, u.i) - 1 AS n, w.level, u.kind, u.id
  FROM walk w CROSS JOIN LATERAL unnest(w.kinds, w.ids) WITH ORDINALITY AS u(kind, id, i)
),
page_frames AS (SELECT id FROM nodes WHERE kind = 'f' AND n >= %(lo)s AND n < %(hi)s),
known_frames AS (SELECT id FROM nodes WHERE kind = 'f' AND n < %(hi)s),
page_events AS (
  SELECT * FROM memory_event WHERE context_id = %(ctx)s
  AND seq = ANY(ARRAY(SELECT id FROM nodes WHERE kind = 'e' AND n >= %(lo)s AND n < %(hi)s))
),
relations AS (
  -- two index scans (live relations by subject, by object), not an OR over both
  SELECT r.id, r.subject_id, r.name, r.object_id FROM memory_relation r
  WHERE r.subject_id = ANY(ARRAY(SELECT id FROM page_frames))
    AND r.object_id = ANY(ARRAY(SELECT id FROM known_frames)) AND r.removed_version IS NULL
  UNION
  SELECT r.id, r.subject_id, r.name, r.object_id FROM memory_relation r
  WHERE r.object_id = ANY(ARRAY(SELECT id FROM page_frames))
    AND r.subject_id = ANY(ARRAY(SELECT id FROM known_frames)) AND r.removed_version IS NULL
)
SELECT x.n, x.level, x.kind AS node, x.id, f.sources::text AS sources, {{f.recall_frame}},
       CASE WHEN x.n >= %(lo)s THEN octet_length(f.body::text) END AS body_bytes,
       CASE WHEN x.n >= %(lo)s AND %(bodies)s AND octet_length(f.body::text) <= %(budget)s
            THEN f.body::text END AS body,
       {{e.recall_event}}, left(e.content, %(preview)s) AS preview,
       char_length(e.content) AS chars, octet_length(e.content) AS content_bytes,
       CASE WHEN %(contents)s AND octet_length(e.content) <= %(budget)s THEN e.content END
         AS content,
       CASE WHEN x.n = -1 THEN (SELECT c.version FROM memory_context c WHERE c.id = %(ctx)s)
         END AS version,
       CASE WHEN x.n = -1 THEN (
         SELECT coalesce(json_agg(json_build_array(r.id, r.subject_id, r.name, r.object_id)
                                  ORDER BY r.id), '[]')::text FROM relations r)
         END AS relations
FROM (SELECT n, level, kind, id FROM nodes UNION ALL SELECT -1, NULL, NULL, NULL) AS x
LEFT JOIN memory_frame f ON x.kind = 'f' AND f.id = x.id
LEFT JOIN page_events e ON x.kind = 'e' AND e.seq = x.id
ORDER BY x.n

-- name: first_page_ancestors
{{> walk_open}} {{> no_frame_ids}} {{> walk_gather}}
{{> walk_sources}} UNION ALL {{> walk_out_relations}}
{{> walk_close}} {{> first_page_rows}}

-- name: first_page_descendants
{{> walk_open}} {{> level_frame_ids}} {{> walk_gather}}
{{> walk_citing_frames}} UNION ALL {{> walk_in_relations}}
{{> walk_close}} {{> level_frame_join}} {{> first_page_rows}}

-- name: first_page_both
{{> walk_open}} {{> level_frame_ids}} {{> walk_gather}}
{{> walk_sources}} UNION ALL {{> walk_out_relations}}
UNION ALL {{> walk_citing_frames}} UNION ALL {{> walk_in_relations}}
{{> walk_close}} {{> level_frame_join}} {{> first_page_rows}}

-- name: page_frames
-- A later page's frames, read in the caller's snapshot (the body only when it fits).
SELECT id, sources::text AS sources, {{recall_frame}},
       octet_length(body::text) AS body_bytes,
       CASE WHEN %(bodies)s AND octet_length(body::text) <= %(budget)s THEN body::text END
         AS body
FROM memory_frame WHERE id = ANY(%(ids)s)

-- name: page_events
-- A later page's events (the text only when it fits).
SELECT seq, {{recall_event}}, left(content, %(preview)s) AS preview,
       char_length(content) AS chars, octet_length(content) AS content_bytes,
       CASE WHEN %(contents)s AND octet_length(content) <= %(budget)s THEN content END
         AS content
FROM memory_event WHERE context_id = %(ctx)s AND seq = ANY(%(seqs)s)

-- name: page_relations
-- The live relations between a later page's frames and the frames before it.
SELECT r.id, r.subject_id, r.name, r.object_id FROM memory_relation r
WHERE r.subject_id = ANY(%(page)s) AND r.object_id = ANY(%(known)s) AND r.removed_version IS NULL
UNION
SELECT r.id, r.subject_id, r.name, r.object_id FROM memory_relation r
WHERE r.object_id = ANY(%(page)s) AND r.subject_id = ANY(%(known)s) AND r.removed_version IS NULL
ORDER BY 1

-- name: frames_citing
-- The frames citing a kept walk's root event, by id.
SELECT id FROM memory_frame WHERE context_id = %s AND sources ? %s ORDER BY id

-- name: walk_frames
-- The frame ids and sources of frames a kept walk has not read yet.
SELECT id, frame_id, sources::text AS sources FROM memory_frame WHERE id = ANY(%s)

-- name: walk_parents
-- A kept walk's expansion, in one round trip: the parents' own rows (tag `p`) and every
-- neighbour but sources (`o` outgoing and `i` incoming relations, `c` citing frames).
SELECT 'p' AS tag, id AS pk, frame_id, sources::text AS sources, NULL::bigint AS other,
       NULL::bigint AS relation
FROM memory_frame WHERE id = ANY(%(missing)s)

-- name: walk_out_neighbours
SELECT 'o', subject_id, NULL, NULL, object_id, id FROM memory_relation
WHERE subject_id = ANY(%(pks)s) AND removed_version IS NULL

-- name: walk_in_neighbours
SELECT 'c', id, NULL, sources::text, NULL, NULL FROM memory_frame
WHERE context_id = %(ctx)s AND sources ?| ARRAY(
  SELECT frame_id::text FROM memory_frame WHERE id = ANY(%(pks)s))
UNION ALL
SELECT 'i', object_id, NULL, NULL, subject_id, id FROM memory_relation
WHERE object_id = ANY(%(pks)s) AND removed_version IS NULL

-- name: expand_ancestors
{{> walk_parents}} UNION ALL {{> walk_out_neighbours}}

-- name: expand_descendants
{{> walk_parents}} UNION ALL {{> walk_in_neighbours}}

-- name: expand_both
{{> walk_parents}} UNION ALL {{> walk_out_neighbours}} UNION ALL {{> walk_in_neighbours}}

-- name: frames_by_frame_id
-- The pks of frames a parent's sources name.
SELECT frame_id, id FROM memory_frame WHERE context_id = %s AND frame_id = ANY(%s)

-- name: snapshot
-- A later page outside a caller's transaction reads in one snapshot (memory.recall.graph).
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY
