-- Statements of the project package (morphz.database_hint), sent on a direct connection
-- before Django has touched the database.

-- name: migrations_table
-- Whether the database has Django's migration table at all (a new, empty database has not).
SELECT to_regclass('django_migrations') IS NOT NULL AS present

-- name: applied_migrations
SELECT name FROM django_migrations WHERE app = 'memory'

-- name: answer_within
-- How long each of the probe's statements may wait (ms, this transaction only): a server
-- that takes the connection but never answers (a lock, a stuck server) is as unusable as one
-- that refuses it, and a readiness probe must answer.
SELECT set_config('statement_timeout', %(ms)s, true)
