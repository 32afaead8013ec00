-- Statements of the memory package's own modules (memory.locking).

-- name: lock_context
-- The commit path's row lock: prepared (memory.locking.send_lock).
SELECT {{context_locked}} FROM memory_context WHERE id = %s FOR UPDATE

-- name: token_is_live
-- Prepared: the commit path asks it inside its pipeline (memory.contexts.send_token_check).
SELECT 1 AS live FROM memory_apitoken WHERE id = %s AND context_id = %s AND revoked_at IS NULL
AND (expires_at IS NULL OR expires_at > statement_timestamp())

-- name: replica_context_state
-- The context's row as a replica has replayed it (memory.replicas).
SELECT version, last_seq FROM memory_context WHERE id = %s
