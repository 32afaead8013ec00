-- Search's statements (most still inline in their modules, to be moved here).

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
-- The documents nearest the query in meaning that the words did not find (`ranking._near`):
-- the candidates are the Python path's (`semantic.nearest`), the newest {scan} documents of
-- the context the filters keep; each scores its inner product with the query (embeddings
-- are of unit length: the cosine), of %(floor)s or more, closest first. The CASE keeps a
-- vector of other dimensions from being compared (pgvector raises on that).
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
  WHERE n.id <> ALL(%(found)s::bigint[])
) s
WHERE s.cosine >= %(floor)s
ORDER BY s.cosine DESC LIMIT %(near)s
