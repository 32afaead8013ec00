-- Statements of erasure (memory.erasure.erase).

-- name: copying_on
-- Set for the rest of the erasure's transaction: the status log records memory, not
-- masking.
SET LOCAL morphz.copying = 'on'

-- name: copying_off
SET LOCAL morphz.copying = 'off'
