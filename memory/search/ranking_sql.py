"""The SQL text of search's ranking (`memory.search.ranking` fills and runs it).

`RANK_SQL` ranks in one statement (its `{select}` a page or the head to reorder); `PAGE`,
`HEAD` and `PAGE_OF_IDS` end it; the rest are pieces `ranking._sql` fits in. Placeholders in
braces are the ranking's constants and filters, `%(name)s` its parameters.
"""

# One statement, planned quickly: the selecting items come as an array, each a
# parameterised GIN scan that returns ids only; their weights are computed here from how
# many documents hold each (BM25's idf). Common items select (the newest WIDE_POOL each,
# weighing nothing there) only when the rare ones found fewer than WIDEN_BELOW. Each
# candidate is then read once by primary key for the rest of its score.
RANK_SQL = """
WITH rare AS MATERIALIZED (
  -- (DISTINCT: an item of several lexemes may be found in a document and in its parts.)
  SELECT DISTINCT d.id, q.item
  FROM unnest(%(rare)s::tsquery[], %(recent)s::boolean[]) WITH ORDINALITY AS q(query, recent, item)
  CROSS JOIN LATERAL (
    SELECT d.id FROM memory_searchdocument d
    WHERE NOT q.recent AND d.context_id = %(ctx)s AND d.tokens @@ q.query{filters}
    UNION ALL
    -- A word in BROAD documents or more: among the newest RECENT_WINDOW only, found
    -- through both indexes together rather than by reading each of its documents.
    SELECT d.id FROM memory_searchdocument d
    WHERE q.recent AND d.context_id = %(ctx)s AND d.created_at >= %(recent_since)s
      AND d.tokens @@ q.query{filters}
    UNION ALL
    -- Frames older than that: what the agent chose to keep is never left out (few rows).
    SELECT d.id FROM memory_searchdocument d
    WHERE q.recent AND d.context_id = %(ctx)s AND d.frame_id IS NOT NULL
      AND d.created_at < %(recent_since)s AND d.tokens @@ q.query{filters}
    UNION ALL
    -- Words past PostgreSQL's 1 MB per tsvector, in a huge event's parts (few rows).
    SELECT d.id FROM memory_searchpart p JOIN memory_searchdocument d ON d.id = p.document_id
    WHERE p.context_id = %(ctx)s AND p.tokens @@ q.query
      AND (NOT q.recent OR d.created_at >= %(recent_since)s){filters}
  ) d
),
wide AS (
  -- One document more than the pool is looked at, so `more` tells a word holding exactly
  -- {pool} documents (all of them taken) from one holding more (some left out).
  SELECT d.id, 0::bigint AS item, d.more
  FROM unnest(%(common)s::tsquery[]) AS q(query)
  CROSS JOIN LATERAL (
    SELECT t.id, count(*) OVER () > {pool} OR %(windowed)s AS more FROM ((
      SELECT d.id, d.created_at FROM memory_searchdocument d
      WHERE d.context_id = %(ctx)s AND d.created_at >= %(recent_since)s AND d.tokens @@ q.query{filters}
      ORDER BY d.created_at DESC, d.id DESC LIMIT {pool} + 1
    ) UNION (
      SELECT d.id, d.created_at FROM memory_searchpart p
      JOIN memory_searchdocument d ON d.id = p.document_id
      WHERE p.context_id = %(ctx)s AND d.created_at >= %(recent_since)s AND p.tokens @@ q.query{filters}
      ORDER BY d.created_at DESC, d.id DESC LIMIT {pool} + 1
    )) t
    ORDER BY t.created_at DESC, t.id DESC LIMIT {pool}
  ) d
  WHERE (SELECT count(*) FROM rare) < {widen}
),
weights AS (
  -- A word limited to the newest documents weighs its count over the whole context
  -- (`fixed`); the phrase then weighs its count among them, scaled to the context.
  SELECT item, coalesce((%(fixed)s::float8[])[item], (%(forms)s::float8[])[item]
         * ln(1 + (greatest(%(docs)s, n) - n + 0.5) / (n + 0.5))) AS w
  FROM (SELECT item, count(*) * (%(scale)s::float8[])[item] AS n FROM rare GROUP BY item) c
),
found AS (
  SELECT m.id, sum(coalesce(w.w, 0)) AS w
  FROM (SELECT id, item FROM rare UNION ALL SELECT id, item FROM wide) m
  LEFT JOIN weights w ON w.item = m.item
  GROUP BY m.id
),
summed AS (
  -- Each candidate once more, by primary key: what the common words it holds weigh, and
  -- for a frame what the query words its id holds weigh.
  SELECT d.id, d.created_at, d.frame_id IS NOT NULL AND lower(d.ref) = ANY(%(exact)s::text[]) AS exact,
         (f.w + {bonus}
          + CASE WHEN d.frame_id IS NULL THEN 0 ELSE {id_weight} * ({named}) END)
         * (CASE WHEN d.frame_id IS NOT NULL THEN {frame} WHEN d.kind = 'transaction' THEN {tx}
                 ELSE 1 END)
         -- Live memory first (R60): a frame retiring, retired or superseded by an active
         -- frame weighs less than a live one saying the same, unless a status is asked.
         -- (The successors `superseded_by` names: one retired replaces nothing any more.)
         * (CASE WHEN %(stale)s AND d.frame_id IS NOT NULL AND (d.status <> 'active' OR EXISTS (
                   SELECT 1 FROM memory_relation r JOIN memory_frame s ON s.id = r.subject_id
                   WHERE r.object_id = d.frame_id AND r.name = 'supersedes'
                     AND r.removed_version IS NULL AND s.status = 'active'))
                 THEN {stale} ELSE 1 END)
         * {k1p1} / (1 + {k1} * (1 - {b} + {b} * d.length / %(avg)s)) AS score
  FROM found f JOIN memory_searchdocument d ON d.id = f.id{once}
  -- Honest misses (R62): a document holding none of the query's content words is no hit.
  WHERE %(content)s::tsquery IS NULL OR {content}
),
hits AS (
  -- The frame named by the query comes first, and scores above every other hit so a
  -- client sorting by score keeps it there (EXACT_LEAD more than the best of the rest).
  SELECT id, exact, CASE WHEN exact THEN greatest(score, {lead} + coalesce(
           (SELECT max(o.score) FROM summed o WHERE NOT o.exact), 0)) ELSE score END AS score,
         created_at FROM summed
  ORDER BY exact DESC, score DESC, created_at DESC, id DESC
  LIMIT %(limit)s OFFSET %(offset)s
),
first AS (  -- snippets open at the query word that weighs most (`snippets.word_pattern`),
  -- else at its stems' roots (`snippets.stem_roots`, space-separated)
  SELECT w.word, (%(patterns)s::text[])[array_position(%(firsts)s::text[], w.word)] AS pattern,
         (%(roots)s::text[])[array_position(%(firsts)s::text[], w.word)] AS roots
  FROM (SELECT coalesce((SELECT (%(firsts)s::text[])[item] FROM weights
                         ORDER BY w DESC, item LIMIT 1), (%(firsts)s::text[])[1]) AS word) w
)
{select}"""
# The page: each hit with what its snippet is cut from. {count} and {order} differ between
# the one-statement ranking and the page of a head reordered by meaning (`PAGE_OF_IDS`).
PAGE = r"""
SELECT h.score, d.frame_id, d.event_id, d.ref, d.status, d.kind, d.thread, d.created_at,
       f.frame_id, f.body::text, e.window, e.cut, e.payload, fw.word, h.exact,
       -- Which content words the hit holds, and the live frames superseding it.
       ARRAY(SELECT {held} FROM unnest(%(words)s::tsquery[]) AS w), d.parts,
       ARRAY(SELECT s.frame_id FROM memory_relation r JOIN memory_frame s ON s.id = r.subject_id
             WHERE r.object_id = d.frame_id AND r.name = 'supersedes'
               AND r.removed_version IS NULL AND s.status = 'active' ORDER BY s.frame_id),
       -- Which content words it holds only through the turn it answers (`vectors.reply_form`),
       -- and which of the query's stem lexemes it holds (its snippet marks their words).
       ARRAY(SELECT {held} FROM unnest(%(borrowed)s::tsquery[]) AS w),
       ARRAY(SELECT s.lexeme FROM unnest(%(stems)s::text[], %(stem_queries)s::tsquery[])
             AS s(lexeme, w) WHERE {held}),
       {lag}, c.n, c.more
FROM {count} c
CROSS JOIN first fw
LEFT JOIN hits h ON true
LEFT JOIN memory_searchdocument d ON d.id = h.id
LEFT JOIN memory_frame f ON f.id = d.frame_id
LEFT JOIN LATERAL (
  -- The window is cut here so a huge log never leaves the database; when the first query
  -- word is not in the content it was found in the payload, which comes along then.
  SELECT substr(ev.content, greatest(1, w.pos - {before}), {width}) AS window,
         w.pos > {before} + 1 AS cut,
         CASE WHEN w.raw = 0 AND ev.kind <> 'transaction' THEN ev.payload::text END AS payload
  FROM memory_event ev
  -- Typeset apostrophes read as typed ones (`don't` is `don’t`), one character for one.
  CROSS JOIN LATERAL (SELECT translate(lower(ev.content), U&'\2018\2019', '''''') AS text,
                             translate(fw.word, U&'\2018\2019', '''''') AS word OFFSET 0) l
  -- The word standing alone (`\m`, `\M`: word edges; every other character escaped), not
  -- inside a longer one (`art` in `restart`), else anywhere (an identifier's part), as
  -- `snippets.word_at` finds it in a frame's text; else its stems' first root (`snippets.window`).
  CROSS JOIN LATERAL (SELECT coalesce(
    nullif(regexp_instr(l.text, '\m' || fw.pattern || '\M'), 0), nullif(strpos(l.text, l.word), 0),
    (SELECT min(nullif(strpos(l.text, root), 0)) FROM unnest(string_to_array(fw.roots, ' ')) AS root),
    0) AS raw) r
  CROSS JOIN LATERAL (SELECT r.raw, coalesce(nullif(r.raw, 0), 1) AS pos) w
  WHERE ev.id = d.event_id
) e ON true
ORDER BY {order}
"""
# How many documents matched, and whether a common word that selected left some of its
# documents out (it held more than WIDE_POOL): the count is exact otherwise.
COUNTED = "(SELECT count(*) AS n, EXISTS (SELECT 1 FROM wide WHERE more) AS more FROM summed)"
RANKED_ORDER = "h.exact DESC, h.score DESC, d.created_at DESC, d.id DESC"
# The head to reorder by meaning: ids, scores and embeddings only (no snippet is cut for a
# hit the page will not show; a window reads a whole event's text).
HEAD = """
SELECT h.score, h.id, h.exact,
       CASE WHEN d.embedding_model = %(model)s THEN d.embedding END, fw.word,
       -- Which of the documents closest in meaning the words found (`ranking._reordered`).
       ARRAY(SELECT s.id FROM summed s WHERE s.id = ANY(%(near_ids)s::bigint[])),
       {lag}, c.n, c.more
FROM {counted} c
CROSS JOIN first fw
LEFT JOIN hits h ON true
LEFT JOIN memory_searchdocument d ON d.id = h.id
ORDER BY h.exact DESC, h.score DESC, h.created_at DESC, h.id DESC
"""
# The page of a reordered head: its ids in their new order with their new scores.
PAGE_OF_IDS = """
WITH hits AS (
  SELECT * FROM unnest(%(ids)s::bigint[], %(scores)s::float8[], %(exacts)s::boolean[])
    WITH ORDINALITY AS h(id, score, exact, n)
),
first AS (SELECT %(word)s::text AS word, %(pattern)s::text AS pattern, %(root)s::text AS roots)
"""
# What a limited item (number k of `rare`) weighs in an event older than the newest
# documents: its weight as the statement counted it, or as `plan` estimated it.
OLDER_EVENT = """CASE WHEN d.created_at < %(recent_since)s AND d.frame_id IS NULL
  AND {holds}
  THEN coalesce((SELECT w FROM weights WHERE item = {k}), {fallback}) ELSE 0 END"""
# Whether a document (`d`, its vector read once as `v`) holds a query: in its vector, or in
# one of its parts (an event past PostgreSQL's 1 MB per tsvector; `memory.models.SearchPart`).
HOLDS = """({vector}.tokens @@ {query} OR CASE WHEN d.parts > 0 THEN EXISTS (
  SELECT 1 FROM memory_searchpart p WHERE p.document_id = d.id AND p.tokens @@ {query})
  ELSE false END)"""
ONCE = """
  CROSS JOIN LATERAL (SELECT d.tokens || ''::tsvector AS tokens OFFSET 0) v"""
# What the query words a frame's id holds weigh (their primary form): a selecting word's
# weight as counted in the statement, a scoring-only word's as `plan` computed it. The id's
# words are split at its separators (`vocabulary.FRAME_ID_RE`; an event ref's `@`) by
# `translate`: no regular expression with a Unicode class (`snippets.word_pattern` says why).
ID_WORDS = "string_to_array(translate(lower(d.ref), '._-@', '    '), ' ')"
NAMED = f"""coalesce((
           SELECT sum(coalesce(n.w, i.w)) FROM unnest(%(named_words)s::text[],
             %(named_items)s::bigint[], %(named_weights)s::float8[]) AS i(words, item, w)
           LEFT JOIN weights n ON n.item = i.item
           WHERE string_to_array(i.words, ' ') <@ {ID_WORDS}), 0)"""  # noqa: S608  (constants)
