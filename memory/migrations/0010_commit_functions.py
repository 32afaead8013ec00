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
  ev bigint;
  rec bigint;
  u record;
BEGIN
  INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at,
      size_chars, token_estimate, is_observation, active, status_version, pending, delivers)
    VALUES (ctx, (d->>'seq')::bigint, 'transaction', d->>'thread', d->>'text',
      d->'payload', at, (d->>'size_chars')::bigint, 0, false, false, 0, false, '{}')
    RETURNING id INTO ev;

  INSERT INTO memory_transactionrecord (context_id, author, author_kind, thread, base_version,
      committed_version, status, reason, text, ops, receipt, frame_ids, event_id, evaluation_id,
      created_at, idempotency_key, request_hash)
    SELECT ctx, r.author, r.author_kind, d->>'thread', r.base_version, ver, 'committed',
      r.reason, d->>'text', r.ops::json, r.receipt,
      ARRAY(SELECT jsonb_array_elements_text(r.frame_ids)), ev, r.evaluation_id, at,
      r.idempotency_key, r.request_hash
    FROM jsonb_to_record(d->'record') AS r(author text, author_kind text, base_version bigint,
      reason text, ops text, receipt jsonb, frame_ids jsonb, evaluation_id bigint,
      idempotency_key text, request_hash text)
    RETURNING id INTO rec;

  IF d->'created' <> '[]' THEN
    INSERT INTO memory_frame (context_id, frame_id, revision, body, sources, status, protected,
        retire_requested_tick, retire_due_tick, retire_reason, retire_generation, token_estimate,
        created_version, changed_version, updated_at)
      SELECT ctx, f.frame_id, f.revision, f.body::json, f.sources, f.status, f.protected,
        f.retire_requested_tick, f.retire_due_tick, f.retire_reason, f.retire_generation,
        f.token_estimate, ver, ver, now()
      FROM jsonb_to_recordset(d->'created') AS f(frame_id text, revision integer, body text,
        sources jsonb, status text, protected boolean, retire_requested_tick bigint,
        retire_due_tick bigint, retire_reason text, retire_generation integer,
        token_estimate bigint);
  END IF;

  -- Row by row: each UPDATE finds its row through the primary key whatever the planner
  -- would estimate for a join with the document's rows.
  FOR u IN SELECT * FROM jsonb_to_recordset(d->'updated') AS x(id bigint, revision integer,
      body text, sources jsonb, status text, protected boolean, retire_requested_tick bigint,
      retire_due_tick bigint, retire_reason text, retire_generation integer,
      token_estimate bigint, changed_version bigint)
  LOOP
    UPDATE memory_frame SET revision = u.revision, body = u.body::json,
        sources = u.sources, status = u.status, protected = u.protected,
        retire_requested_tick = u.retire_requested_tick, retire_due_tick = u.retire_due_tick,
        retire_reason = u.retire_reason, retire_generation = u.retire_generation,
        token_estimate = u.token_estimate, changed_version = u.changed_version,
        updated_at = now()
      WHERE id = u.id;
  END LOOP;

  IF d->'revisions' <> '[]' THEN
    INSERT INTO memory_framerevision (frame_id, revision, body, sources, transaction_id, version,
        created_at)
      SELECT COALESCE(f.id, (SELECT id FROM memory_frame
          WHERE context_id = ctx AND frame_id = f.frame_id)),
        f.revision, f.body::json, f.sources, rec, ver, at
      FROM jsonb_to_recordset(d->'revisions') AS f(id bigint, frame_id text, revision integer,
        body text, sources jsonb);
  END IF;

  -- A request is resolved before the frame's new one (if any) is opened.
  IF d->'resolved' <> '[]' THEN
    FOR u IN SELECT * FROM jsonb_to_recordset(d->'resolved') AS x(frame bigint, outcome text)
    LOOP
      UPDATE memory_retirementrequest SET outcome = u.outcome, resolved_tick = at_tick,
          resolved_version = ver
        WHERE frame_id = u.frame AND outcome = d->>'pending';
    END LOOP;
  END IF;

  IF d->'requested' <> '[]' THEN
    INSERT INTO memory_retirementrequest (frame_id, generation, requested_tick, due_tick, reason,
        requested_version, outcome, resolved_tick, resolved_version)
      SELECT COALESCE(r.id, (SELECT id FROM memory_frame
          WHERE context_id = ctx AND frame_id = r.frame_id)),
        r.generation, at_tick, r.due_tick, r.reason, ver, r.outcome, r.resolved_tick,
        r.resolved_version
      FROM jsonb_to_recordset(d->'requested') AS r(id bigint, frame_id text, generation integer,
        due_tick bigint, reason text, outcome text, resolved_tick bigint, resolved_version bigint);
  END IF;

  IF d->'unrelated' <> '[]' THEN
    UPDATE memory_relation SET removed_version = ver
      WHERE id = ANY (ARRAY(SELECT value::bigint FROM jsonb_array_elements_text(d->'unrelated')));
  END IF;

  IF d->'related' <> '[]' THEN
    INSERT INTO memory_relation (context_id, subject_id, name, object_id, created_version)
      SELECT ctx,
        COALESCE(r.subject_id, (SELECT id FROM memory_frame
          WHERE context_id = ctx AND frame_id = r.subject)),
        r.name,
        COALESCE(r.object_id, (SELECT id FROM memory_frame
          WHERE context_id = ctx AND frame_id = r.object)),
        ver
      FROM jsonb_to_recordset(d->'related') AS r(subject_id bigint, subject text, name text,
        object_id bigint, object text);
  END IF;

  FOR u IN SELECT * FROM jsonb_to_recordset(d->'events') AS x(id bigint, active boolean)
  LOOP
    UPDATE memory_event SET active = u.active, status_version = ver WHERE id = u.id;
  END LOOP;

  UPDATE memory_context SET version = ver, last_seq = (d->>'seq')::bigint,
      used_tokens = (d->>'used_tokens')::bigint,
      in_maintenance = (d->>'in_maintenance')::boolean
    WHERE id = ctx;

  -- Search index intents: every touched frame and event, then the transaction event.
  INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
    SELECT ctx, COALESCE(i.id, (SELECT id FROM memory_frame
        WHERE context_id = ctx AND frame_id = i.frame_id)), NULL, at
    FROM jsonb_to_recordset(d->'touched') AS i(id bigint, frame_id text)
    UNION ALL
    SELECT ctx, NULL, v.id, at FROM jsonb_to_recordset(d->'events') AS v(id bigint, active boolean)
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
