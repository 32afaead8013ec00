-- Statements of the memory package's own modules (memory.locking, memory.contexts,
-- memory.replicas).

-- name: lock_context
-- The commit path's row lock: prepared (memory.locking.send_lock). NO KEY UPDATE: writers
-- of one context still wait for each other, while a row that only references the context
-- (the indexer's search documents: a foreign key's KEY SHARE) is inserted without waiting.
SELECT {{context_locked}} FROM memory_context WHERE id = %s FOR NO KEY UPDATE

-- name: live_token
-- The live token of a key hash with its context, on every API request (prepared): every
-- column of both, the token's first (memory.contexts.authenticate_token).
SELECT {{t.token_all}}, {{c.context_all}}
FROM memory_apitoken t JOIN memory_context c ON c.id = t.context_id
WHERE t.key_hash = %s AND t.revoked_at IS NULL
AND (t.expires_at IS NULL OR t.expires_at > statement_timestamp())

-- name: refused_token
-- Why a key hash was refused, read only after live_token found nothing
-- (memory.contexts.token_refusal): its revocation and expiry, if the key names a token.
SELECT revoked_at, expires_at FROM memory_apitoken WHERE key_hash = %s

-- name: token_is_live
-- Prepared: the commit path asks it inside its pipeline (memory.contexts.send_token_check).
SELECT 1 AS live FROM memory_apitoken WHERE id = %s AND context_id = %s AND revoked_at IS NULL
AND (expires_at IS NULL OR expires_at > statement_timestamp())

-- name: replica_context_state
-- The context's row as a replica has replayed it (memory.replicas).
SELECT version, last_seq FROM memory_context WHERE id = %s

-- name: ping
-- Whether a replica still answers after a read on it failed (memory.replicas).
SELECT 1 AS answered
