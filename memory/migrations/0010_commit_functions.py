"""The commit's writes as one server-side function, `morphz_write_commit(jsonb)`.

A commit writes rows in up to eight tables. Sent one statement each, the client spends
most of a commit's time encoding parameters and driving the protocol, while the context row
lock is held. The engine decides every value in Python (`memory.tx.apply`) and sends them in
one JSON document; this function only stores them, in the order the rows refer to each other.
It decides nothing.

The document's keys are written by `memory.tx.store.commit_document`. It is `jsonb`, parsed
once. Frame bodies and operations are `json` (not `jsonb`) columns that keep the order of their
keys, so the document carries them as strings of JSON text, cast to `json` as they are stored.
A frame created by this commit has no id in the document; rows that refer to it find it by
(context, frame id).
"""

from django.db import migrations

FUNCTION = r"""
CREATE OR REPLACE FUNCTION morphz_write_commit(d jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  ctx bigint := (d->>'context')::bigint;
  ver bigint := (d->>'version')::bigint;
  at_tick bigint := (d->>'tick')::bigint;
  at timestamptz := (d->>'now')::timestamptz;
  r jsonb := d->'record';
  ev bigint;
  rec bigint;
  x jsonb;
BEGIN
  INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at,
      size_chars, token_estimate, is_observation, active, status_version, pending, delivers)
    VALUES (ctx, (d->>'seq')::bigint, 'transaction', d->>'thread', d->>'text',
      d->'payload', at, (d->>'size_chars')::bigint, 0, false, false, 0, false, '{}')
    RETURNING id INTO ev;

  INSERT INTO memory_transactionrecord (context_id, author, author_kind, thread, base_version,
      committed_version, status, reason, text, ops, receipt, frame_ids, event_id, evaluation_id,
      created_at, idempotency_key, request_hash)
    VALUES (ctx, r->>'author', r->>'author_kind', d->>'thread', (r->>'base_version')::bigint,
      ver, 'committed', r->>'reason', d->>'text', (r->>'ops')::json, r->'receipt',
      ARRAY(SELECT jsonb_array_elements_text(r->'frame_ids')), ev,
      (r->>'evaluation_id')::bigint, at, r->>'idempotency_key', r->>'request_hash')
    RETURNING id INTO rec;

  -- Row by row, each statement a plain VALUES or a primary-key UPDATE with a cached plan:
  -- a commit touches few rows, and a set-returning scan of the document costs more.
  FOR x IN SELECT * FROM jsonb_array_elements(d->'created') LOOP
    INSERT INTO memory_frame (context_id, frame_id, revision, body, sources, status, protected,
        retire_requested_tick, retire_due_tick, retire_reason, retire_generation, token_estimate,
        created_version, changed_version, updated_at)
      VALUES (ctx, x->>'frame_id', (x->>'revision')::integer, (x->>'body')::json, x->'sources',
        x->>'status', (x->>'protected')::boolean, (x->>'retire_requested_tick')::bigint,
        (x->>'retire_due_tick')::bigint, x->>'retire_reason',
        (x->>'retire_generation')::integer, (x->>'token_estimate')::bigint, ver, ver, now());
  END LOOP;

  FOR x IN SELECT * FROM jsonb_array_elements(d->'updated') LOOP
    UPDATE memory_frame SET revision = (x->>'revision')::integer, body = (x->>'body')::json,
        sources = x->'sources', status = x->>'status', protected = (x->>'protected')::boolean,
        retire_requested_tick = (x->>'retire_requested_tick')::bigint,
        retire_due_tick = (x->>'retire_due_tick')::bigint, retire_reason = x->>'retire_reason',
        retire_generation = (x->>'retire_generation')::integer,
        token_estimate = (x->>'token_estimate')::bigint,
        changed_version = (x->>'changed_version')::bigint, updated_at = now()
      WHERE id = (x->>'id')::bigint;
  END LOOP;

  FOR x IN SELECT * FROM jsonb_array_elements(d->'revisions') LOOP
    INSERT INTO memory_framerevision (frame_id, revision, body, sources, transaction_id,
        version, created_at)
      VALUES (COALESCE((x->>'id')::bigint, (SELECT id FROM memory_frame
          WHERE context_id = ctx AND frame_id = x->>'frame_id')),
        (x->>'revision')::integer, (x->>'body')::json, x->'sources', rec, ver, at);
  END LOOP;

  -- A request is resolved before the frame's new one (if any) is opened.
  FOR x IN SELECT * FROM jsonb_array_elements(d->'resolved') LOOP
    UPDATE memory_retirementrequest SET outcome = x->>'outcome', resolved_tick = at_tick,
        resolved_version = ver
      WHERE frame_id = (x->>'frame')::bigint AND outcome = d->>'pending';
  END LOOP;

  FOR x IN SELECT * FROM jsonb_array_elements(d->'requested') LOOP
    INSERT INTO memory_retirementrequest (frame_id, generation, requested_tick, due_tick, reason,
        requested_version, outcome, resolved_tick, resolved_version)
      VALUES (COALESCE((x->>'id')::bigint, (SELECT id FROM memory_frame
          WHERE context_id = ctx AND frame_id = x->>'frame_id')),
        (x->>'generation')::integer, at_tick, (x->>'due_tick')::bigint, x->>'reason', ver,
        x->>'outcome', (x->>'resolved_tick')::bigint, (x->>'resolved_version')::bigint);
  END LOOP;

  FOR x IN SELECT * FROM jsonb_array_elements(d->'unrelated') LOOP
    UPDATE memory_relation SET removed_version = ver WHERE id = (x #>> '{}')::bigint;
  END LOOP;

  FOR x IN SELECT * FROM jsonb_array_elements(d->'related') LOOP
    INSERT INTO memory_relation (context_id, subject_id, name, object_id, created_version)
      VALUES (ctx,
        COALESCE((x->>'subject_id')::bigint, (SELECT id FROM memory_frame
          WHERE context_id = ctx AND frame_id = x->>'subject')),
        x->>'name',
        COALESCE((x->>'object_id')::bigint, (SELECT id FROM memory_frame
          WHERE context_id = ctx AND frame_id = x->>'object')),
        ver);
  END LOOP;

  FOR x IN SELECT * FROM jsonb_array_elements(d->'events') LOOP
    UPDATE memory_event SET active = (x->>'active')::boolean, status_version = ver
      WHERE id = (x->>'id')::bigint;
  END LOOP;

  UPDATE memory_context SET version = ver, last_seq = (d->>'seq')::bigint,
      used_tokens = (d->>'used_tokens')::bigint,
      in_maintenance = (d->>'in_maintenance')::boolean
    WHERE id = ctx;

  -- Search index intents: every touched frame and event, then the transaction event.
  INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
    SELECT ctx, COALESCE((t->>'id')::bigint, (SELECT id FROM memory_frame
        WHERE context_id = ctx AND frame_id = t->>'frame_id')), NULL, at
    FROM jsonb_array_elements(d->'touched') WITH ORDINALITY AS f(t, n)
    UNION ALL
    SELECT ctx, NULL, (e->>'id')::bigint, at
    FROM jsonb_array_elements(d->'events') WITH ORDINALITY AS v(e, n)
    UNION ALL
    SELECT ctx, NULL, ev, at;

  RETURN rec;
END
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0009_search_bm25")]

    operations = [
        migrations.RunSQL(FUNCTION, reverse_sql="DROP FUNCTION morphz_write_commit(jsonb)"),
    ]
