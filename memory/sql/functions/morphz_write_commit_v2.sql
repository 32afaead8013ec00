-- morphz_write_commit, version 2: writes one commit's rows (memory.tx.store)
-- Created by migration 0012; the database must hold exactly this text
-- (tests/memory/test_sql_functions_match_database.py). To change it, add
-- morphz_write_commit_v3.sql and a migration that runs it; keep this file for that migration's past.
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
  made jsonb;  -- frame id -> row id of the frames this commit creates
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

  -- The created frames in one statement that returns their row ids: the rows below that
  -- refer to a created frame take its id from `made`, never from a lookup, whose cached
  -- plan (made while the table was small) could read the whole table for each frame.
  WITH inserted AS (
    INSERT INTO memory_frame (context_id, frame_id, revision, body, sources, status, protected,
        retire_requested_tick, retire_due_tick, retire_reason, retire_generation, token_estimate,
        created_version, changed_version, updated_at)
      SELECT ctx, c.f->>'frame_id', (c.f->>'revision')::integer, (c.f->>'body')::json, c.f->'sources',
        c.f->>'status', (c.f->>'protected')::boolean, (c.f->>'retire_requested_tick')::bigint,
        (c.f->>'retire_due_tick')::bigint, c.f->>'retire_reason',
        (c.f->>'retire_generation')::integer, (c.f->>'token_estimate')::bigint, ver, ver, now()
      FROM jsonb_array_elements(d->'created') WITH ORDINALITY AS c(f, n) ORDER BY n
      RETURNING frame_id, id
  )
  SELECT coalesce(jsonb_object_agg(frame_id, id), '{}') INTO made FROM inserted;

  -- Then row by row, each statement a plain VALUES or a primary-key UPDATE with a cached
  -- plan: a commit touches few rows, and a set-returning scan of the document costs more.
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
      VALUES (COALESCE((x->>'id')::bigint, (made->>(x->>'frame_id'))::bigint),
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
      VALUES (COALESCE((x->>'id')::bigint, (made->>(x->>'frame_id'))::bigint),
        (x->>'generation')::integer, at_tick, (x->>'due_tick')::bigint, x->>'reason', ver,
        x->>'outcome', (x->>'resolved_tick')::bigint, (x->>'resolved_version')::bigint);
  END LOOP;

  FOR x IN SELECT * FROM jsonb_array_elements(d->'unrelated') LOOP
    UPDATE memory_relation SET removed_version = ver WHERE id = (x #>> '{}')::bigint;
  END LOOP;

  FOR x IN SELECT * FROM jsonb_array_elements(d->'related') LOOP
    INSERT INTO memory_relation (context_id, subject_id, name, object_id, created_version)
      VALUES (ctx,
        COALESCE((x->>'subject_id')::bigint, (made->>(x->>'subject'))::bigint),
        x->>'name',
        COALESCE((x->>'object_id')::bigint, (made->>(x->>'object'))::bigint),
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
    SELECT ctx, COALESCE((t->>'id')::bigint, (made->>(t->>'frame_id'))::bigint), NULL, at
    FROM jsonb_array_elements(d->'touched') WITH ORDINALITY AS f(t, n)
    UNION ALL
    SELECT ctx, NULL, (e->>'id')::bigint, at
    FROM jsonb_array_elements(d->'events') WITH ORDINALITY AS v(e, n)
    UNION ALL
    SELECT ctx, NULL, ev, at;

  RETURN rec;
END
$$;
