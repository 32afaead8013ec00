"""The PostgreSQL limit for commits on one context: the same row lock, inserts and commit as
the engine's first example, by a PL/pgSQL function called from `pgbench` clients (no Python
in between). `bench/run_all.py` prints the engine's 8 writers against it.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from common import prepare_targets

PG_FUNCTION = """
CREATE TABLE IF NOT EXISTS morphz_bench_targets (
  id bigint PRIMARY KEY, release_pk bigint, event_pk bigint, seq bigint);
CREATE SEQUENCE IF NOT EXISTS morphz_bench_n;
CREATE OR REPLACE FUNCTION morphz_bench_commit(ctx bigint, prefix text) RETURNS void AS $$
DECLARE
  t record; v bigint; lseq bigint; used bigint; ev_tokens bigint;
  tx_event bigint; rec bigint; derived bigint; n bigint;
BEGIN
  -- as the engine's commit does: foreign-key checks look rows up by key, however
  -- the first plan on this connection judged the tables' sizes
  PERFORM set_config('enable_seqscan', 'off', true);
  n := nextval('morphz_bench_n');
  SELECT * INTO t FROM morphz_bench_targets WHERE id = n;
  SELECT version, last_seq, used_tokens INTO v, lseq, used
    FROM memory_context WHERE id = ctx FOR NO KEY UPDATE;
  SELECT token_estimate INTO ev_tokens FROM memory_event WHERE id = t.event_pk;
  INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at,
      size_chars, token_estimate, is_observation, active, status_version, pending, delivers)
    VALUES (ctx, lseq + 1, 'transaction', 'main', prefix || n, json_build_object('version', v + 1),
      now(), 200, 0, false, false, 0, false, '{}') RETURNING id INTO tx_event;
  INSERT INTO memory_transactionrecord (context_id, author, author_kind, thread, base_version,
      committed_version, status, reason, text, ops, receipt, frame_ids, event_id, created_at)
    VALUES (ctx, 'bench', 'agent', 'main', v, v + 1, 'committed', 'r', prefix || n, '[]',
      json_build_object('version', v + 1), ARRAY['release-' || prefix || n, 'test-result-' || prefix || n],
      tx_event, now()) RETURNING id INTO rec;
  INSERT INTO memory_frame (context_id, frame_id, revision, body, sources, status, protected,
      retire_generation, token_estimate, created_version, changed_version, updated_at)
    VALUES (ctx, 'test-result-' || prefix || n, 1, '{"tests":"passed"}',
      jsonb_build_array('@e' || t.seq), 'active', false, 0, 10, v + 1, v + 1, now())
    RETURNING id INTO derived;
  UPDATE memory_frame SET revision = revision + 1, body = '{"goal":"ship-v1","stage":"packaging"}',
      changed_version = v + 1, updated_at = now() WHERE id = t.release_pk;
  INSERT INTO memory_framerevision (frame_id, revision, body, sources, transaction_id, version,
      created_at)
    VALUES (derived, 1, '{"tests":"passed"}', '[]', rec, v + 1, now()),
           (t.release_pk, 2, '{"goal":"ship-v1","stage":"packaging"}', '[]', rec, v + 1, now());
  INSERT INTO memory_relation (context_id, subject_id, name, object_id, created_version)
    VALUES (ctx, derived, 'supports', t.release_pk, v + 1);
  UPDATE memory_event SET active = false, status_version = v + 1 WHERE id = t.event_pk;
  UPDATE memory_context SET version = v + 1, last_seq = lseq + 1,
      used_tokens = used - ev_tokens WHERE id = ctx;
  INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
    VALUES (ctx, derived, NULL, now()), (ctx, t.release_pk, NULL, now()),
           (ctx, NULL, t.event_pk, now()), (ctx, NULL, tx_event, now());
END $$ LANGUAGE plpgsql;
"""


def pgbench_binary() -> str:
    try:
        import pgserver

        candidate = Path(pgserver.__file__).parent / "pginstall" / "bin" / "pgbench"
        if candidate.exists():
            return str(candidate)
    except ImportError:
        pass
    return "pgbench"


def postgres_limit(context_id: int, clients: int, per_client: int) -> float:
    """Commits/s of the same rows by a PL/pgSQL function from `clients` pgbench clients."""
    from django.db import connection

    from memory.models import Event, Frame

    total = clients * per_client
    prefix = f"pg{time.monotonic_ns()}-"
    pairs = prepare_targets(context_id, prefix, total)
    releases = dict(
        Frame.objects.filter(
            context_id=context_id, frame_id__in=[f"release-{prefix}{k}" for k, _ in pairs]
        ).values_list("frame_id", "pk")
    )
    events = dict(
        Event.objects.filter(context_id=context_id, seq__in=[seq for _, seq in pairs]).values_list(
            "seq", "pk"
        )
    )
    with connection.cursor() as cur:
        cur.execute(PG_FUNCTION)
        cur.execute("TRUNCATE morphz_bench_targets")
        cur.execute("SELECT setval('morphz_bench_n', 1, false)")
        cur.executemany(
            "INSERT INTO morphz_bench_targets VALUES (%s, %s, %s, %s)",
            [
                (n, releases[f"release-{prefix}{k}"], events[seq], seq)
                for n, (k, seq) in enumerate(pairs, start=1)
            ],
        )
    settings = connection.settings_dict
    env = {
        **os.environ,
        "PGHOST": settings.get("HOST") or "",
        "PGPORT": str(settings.get("PORT") or ""),
        "PGUSER": settings.get("USER") or "",
        "PGPASSWORD": settings.get("PASSWORD") or "",
        "PGDATABASE": settings["NAME"],
    }
    env = {k: v for k, v in env.items() if v != ""}
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
        script.write(f"SELECT morphz_bench_commit({context_id}, '{prefix}');\n")
    try:
        done = subprocess.run(
            [pgbench_binary(), "-n", "-c", str(clients), "-j", str(min(clients, 2)), "-t",
             str(per_client), "-f", script.name],
            env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        os.unlink(script.name)
    if done.returncode != 0:
        raise RuntimeError(f"pgbench failed: {done.stderr[-500:]}")
    match = re.search(r"tps = ([0-9.]+)", done.stdout)
    if match is None:
        raise RuntimeError(f"pgbench printed no tps: {done.stdout[-500:]}")
    return float(match.group(1))
