-- Search's statements (the ranking's are composed in memory/search/ranking_sql.py).

-- name: vector_column
-- Whether migration 0031 added the documents' pgvector column (`vector_column.available`).
SELECT EXISTS (
  SELECT 1 FROM pg_attribute
  WHERE attrelid = to_regclass('memory_searchdocument') AND attname = 'embedding_vector'
    AND NOT attisdropped
) AS present

-- name: index_parts
-- What the word index finds for each ranking item (`ranking._reach`): its tsquery without
-- its "not" parts, a phrase as its words together (the index checks neither; PostgreSQL's
-- recheck does, reading each document). NULL when nothing of it is indexable.
SELECT nullif(regexp_replace(querytree(q.query), '<(-|[0-9]+)>', '&', 'g'), 'T') AS part
FROM unnest(%(items)s::tsquery[]) WITH ORDINALITY AS q(query, item) ORDER BY q.item

-- name: near_candidates
-- The candidates of the Python path (`semantic.nearest`), where the database has no vectors:
-- the newest {scan} embedded documents of the context the filters keep.
SELECT d.id, d.embedding FROM memory_searchdocument d
WHERE d.context_id = %(ctx)s AND d.embedding IS NOT NULL AND octet_length(d.embedding) > 0
  AND d.kind <> 'transaction' AND d.embedding_model = %(model)s{filters}
ORDER BY d.created_at DESC, d.id DESC LIMIT {scan}

-- name: near
-- The documents nearest the query in meaning (`memory.search.near`): the candidates are the
-- Python path's (`semantic.nearest`), the newest {scan} documents of the context the
-- filters keep; each scores its inner product with the query (embeddings are of unit
-- length: the cosine), of %(floor)s or more, closest first. The CASE keeps a vector of
-- other dimensions from being compared (pgvector raises on that).
SELECT s.id, s.embedding FROM (
  SELECT n.id, n.embedding,
         CASE WHEN vector_dims(n.embedding_vector) = %(dims)s
              THEN (n.embedding_vector <#> %(meaning)s::vector) * -1 END AS cosine
  FROM (
    SELECT d.id, d.embedding, d.embedding_vector FROM memory_searchdocument d
    WHERE d.context_id = %(ctx)s AND d.embedding IS NOT NULL
      AND octet_length(d.embedding) > 0 AND d.kind <> 'transaction'
      AND d.embedding_model = %(model)s{filters}
    ORDER BY d.created_at DESC, d.id DESC LIMIT {scan}
  ) n
) s
WHERE s.cosine >= %(floor)s
ORDER BY s.cosine DESC LIMIT %(near)s

-- name: answered_turn
-- Which turn a reply answers (`documents.reply_context`), declared once for the index
-- (`event_rows`) and for erasure (`replies_to`): a message `e` of %(kinds)s answers the
-- newest earlier message of those kinds on its thread, at most %(lookback)s events back,
-- when that one is of the other kind (two of one kind in a row are not an answer). A
-- LATERAL subquery over `e`, never run alone.
SELECT t.id, t.content FROM (
  SELECT p.id, p.kind, p.content FROM memory_event p
  WHERE e.kind = ANY(%(kinds)s) AND p.context_id = e.context_id AND p.seq < e.seq
    AND p.seq >= e.seq - %(lookback)s AND p.thread = e.thread AND p.kind = ANY(%(kinds)s)
  ORDER BY p.seq DESC LIMIT 1
) t WHERE t.kind <> e.kind

-- name: event_fingerprints
-- What says whether an indexed event changed since it was read (`_moved_since_read`): its
-- state, and the digests of its text and of the turn it answers (`answered_turn`), which
-- only an erasure changes. A LATERAL subquery over `e` and `a`, also read by `event_rows`.
SELECT e.is_observation, e.active, md5(e.content) AS content_md5,
       md5(e.payload::text) AS payload_md5, md5(left(a.content, %(chars)s)) AS answers_md5

-- name: event_rows
-- Each event to index, with the first %(chars)s characters of the turn it answers
-- (`answered_turn`) and its fingerprint (`event_fingerprints`).
SELECT e.id, e.context_id, e.seq, e.kind, e.thread, e.content, e.payload::text AS payload,
       e.created_at, left(a.content, %(chars)s) AS answers, f.*
FROM memory_event e LEFT JOIN LATERAL ({{> answered_turn}}) a ON true
CROSS JOIN LATERAL ({{> event_fingerprints}}) f
WHERE e.id = ANY(%(ids)s)

-- name: event_fingerprints_now
-- The fingerprints of these events now (`event_fingerprints`).
SELECT e.id, f.* FROM memory_event e LEFT JOIN LATERAL ({{> answered_turn}}) a ON true
CROSS JOIN LATERAL ({{> event_fingerprints}}) f
WHERE e.id = ANY(%(ids)s)

-- name: replies_to
-- The replies whose documents borrow words from these events (`documents.replies_to`):
-- the messages whose answered turn (`answered_turn`) is one of them. Only the %(lookback)s
-- events after each can be (a message further on answers none of them); they are read
-- first, each once (MATERIALIZED: else the planner may ask every event what it answers).
WITH e AS MATERIALIZED (
  SELECT DISTINCT e.id, e.context_id, e.seq, e.kind, e.thread
  FROM memory_event x JOIN memory_event e ON e.context_id = x.context_id
    AND e.seq > x.seq AND e.seq <= x.seq + %(lookback)s
  WHERE x.id = ANY(%(ids)s)
)
SELECT e.id FROM e CROSS JOIN LATERAL ({{> answered_turn}}) a
WHERE a.id = ANY(%(ids)s) ORDER BY e.id

-- name: answered_turns
-- The turn each of these replies answers now (`answered_turn`), by its seq: the turn a
-- search hit found through words it borrowed names (`documents.answered`).
SELECT e.id, t.seq FROM memory_event e
JOIN LATERAL ({{> answered_turn}}) a ON true
JOIN memory_event t ON t.id = a.id
WHERE e.id = ANY(%(ids)s)

-- name: stage
-- Documents go in by COPY into a session-local staging table and one INSERT ... SELECT per
-- target column: a multi-row VALUES statement spent most of its time in the client
-- (splitting and quoting a query of several MB); COPY rows are formatted in C.
CREATE TEMP TABLE IF NOT EXISTS morphz_search_staging (
  context_id bigint, frame_id bigint, event_id bigint, ref text, status text, kind text,
  thread text, created_at timestamptz, tokens tsvector, length integer, embedding bytea,
  embedding_model text, parts integer, lexemes text[], embedding_vector text,
  languages text[]
) ON COMMIT DELETE ROWS

-- name: copy_staged
COPY morphz_search_staging ({{search_staged}}, lexemes, embedding_vector, languages) FROM STDIN

-- name: drop_parts
-- A document's parts (lexemes past one tsvector's bound) are rewritten with it: the old
-- ones go before (only documents that had parts are looked at). {target}: frame_id or
-- event_id.
DELETE FROM memory_searchpart p USING memory_searchdocument d, morphz_search_staging s
WHERE p.document_id = d.id AND d.{target} = s.{target} AND d.parts > 0

-- name: upsert
-- {target}: frame_id or event_id; {column}, {value}, {assign}: pgvector's column where the
-- server has it (`vector_column.upsert_parts`).
INSERT INTO memory_searchdocument ({{search_staged}}{column}, indexed_at)
SELECT {{search_staged}}{value}, now() FROM morphz_search_staging WHERE {target} IS NOT NULL
ORDER BY {target}
ON CONFLICT ({target}) DO UPDATE SET
  ref = EXCLUDED.ref, status = EXCLUDED.status, kind = EXCLUDED.kind, thread = EXCLUDED.thread,
  created_at = EXCLUDED.created_at, tokens = EXCLUDED.tokens, length = EXCLUDED.length,
  embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,
  parts = EXCLUDED.parts, indexed_at = EXCLUDED.indexed_at{assign}

-- name: add_parts
-- The new parts, after their documents. {target}: frame_id or event_id.
INSERT INTO memory_searchpart (document_id, context_id, number, tokens)
SELECT d.id, d.context_id, l.number, l.lexemes::tsvector
FROM morphz_search_staging s JOIN memory_searchdocument d ON d.{target} = s.{target}
CROSS JOIN LATERAL unnest(s.lexemes) WITH ORDINALITY AS l(lexemes, number)
WHERE s.parts > 0

-- name: add_languages
-- The languages of the staged documents' marked stems, kept per context (`languages.held`),
-- in the documents' transaction; in one order, so two batches never wait on each other's.
-- Never removed when a document is rewritten or erased: a language no document holds any
-- more only costs a query its stems in it, never a match.
INSERT INTO memory_searchlanguage (context_id, language)
SELECT DISTINCT s.context_id, l.language
FROM morphz_search_staging s CROSS JOIN LATERAL unnest(s.languages) AS l(language)
ORDER BY 1, 2
ON CONFLICT DO NOTHING

-- name: context_languages
-- The languages a query is stemmed in (`languages.held`): one index read per search.
SELECT language FROM memory_searchlanguage WHERE context_id = %(ctx)s ORDER BY language

-- name: clear_staging
TRUNCATE morphz_search_staging

-- name: analyze_documents
ANALYZE memory_searchdocument

-- name: missing_embeddings
SELECT d.id, d.frame_id, d.event_id FROM memory_searchdocument d
WHERE d.embedding IS NULL AND d.kind <> 'transaction'
ORDER BY d.id LIMIT %s FOR UPDATE SKIP LOCKED

-- name: stale_embeddings
-- Documents embedded by another model than the one in use (a change of embedder): no index
-- serves this, so it is looked for until a pass finds none (`documents._stale_done`).
SELECT d.id, d.frame_id, d.event_id FROM memory_searchdocument d
WHERE d.embedding IS NOT NULL AND d.embedding_model <> %s AND d.kind <> 'transaction'
ORDER BY d.id LIMIT %s FOR UPDATE SKIP LOCKED

-- name: set_embeddings
UPDATE memory_searchdocument d SET embedding = v.embedding, embedding_model = %s
FROM unnest(%s::bigint[], %s::bytea[]) AS v(id, embedding)
WHERE d.id = v.id

-- name: embedding_progress
SELECT count(*) FILTER (WHERE embedding_model = %s AND embedding IS NOT NULL) AS embedded,
       count(*) AS documents
FROM memory_searchdocument WHERE kind <> 'transaction'

-- name: largest_document
-- Where a search cursor's snapshot ends (`cursor.bound`).
SELECT coalesce(max(id), 0) AS bound FROM memory_searchdocument

-- name: merge_pending
-- The word index's pending list merged into the index (`indexer.flush_pending_entries`).
SELECT gin_clean_pending_list(%s::regclass)

-- name: context_size
-- {window}: statistics.RECENT_WINDOW; {kind}, {recent_kind}: the transaction filter. Only a
-- context of more than {window} documents has a window (read only then).
SELECT count(*) AS documents, coalesce(avg(d.length), 0) AS average,
       CASE WHEN count(*) > {window} THEN (
         SELECT r.created_at FROM memory_searchdocument r WHERE r.context_id = %(ctx)s{recent_kind}
         ORDER BY r.created_at DESC OFFSET {window} - 1 LIMIT 1) END AS since
FROM memory_searchdocument d
WHERE d.context_id = %(ctx)s{kind}

-- name: item_counts
-- How many of the context's documents (filters applied) hold each item, up to {cap}: exact
-- below the cap, so a word's weight and role never come from other contexts.
SELECT (SELECT count(*) FROM (
          SELECT 1 FROM memory_searchdocument d
          WHERE d.context_id = %(ctx)s AND d.tokens @@ q.query{filters} LIMIT {cap}) s) AS held
FROM unnest(%(items)s::tsquery[]) WITH ORDINALITY AS q(query, item) ORDER BY q.item

-- name: table_changes
-- The word index's table now, as PostgreSQL's activity statistics count it: its live rows
-- and the rows inserted, updated or deleted since its last ANALYZE (`statistics.SURE`).
SELECT n_live_tup AS live, n_mod_since_analyze AS changed
FROM pg_stat_user_tables WHERE relid = 'memory_searchdocument'::regclass

-- name: common_words
-- PostgreSQL's statistics of the word index (kept by ANALYZE and autovacuum), and the
-- table's rows they are shares of.
SELECT s.most_common_elems::text::text[] AS words, s.most_common_elem_freqs AS shares,
       c.reltuples AS rows
FROM pg_class c
LEFT JOIN pg_stats s ON s.schemaname = current_schema() AND s.tablename = c.relname
  AND s.attname = 'tokens'
WHERE c.oid = 'memory_searchdocument'::regclass
