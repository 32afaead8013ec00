-- memory_frame_log, version 1: a history log trigger (R52)
-- Created by migration 0007; the database must hold exactly this text
-- (tests/memory/test_sql_functions_match_database.py). To change it, add
-- memory_frame_log_v2.sql and a migration that runs it; keep this file for that migration's past.
CREATE OR REPLACE FUNCTION memory_frame_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('morphz.copying', true) = 'on' THEN RETURN NULL; END IF;
  IF TG_OP = 'UPDATE' AND (OLD.revision, OLD.status, OLD.protected, OLD.retire_requested_tick,
      OLD.retire_due_tick, OLD.retire_reason, OLD.retire_generation, OLD.token_estimate,
      OLD.changed_version)
      IS NOT DISTINCT FROM (NEW.revision, NEW.status, NEW.protected, NEW.retire_requested_tick,
      NEW.retire_due_tick, NEW.retire_reason, NEW.retire_generation, NEW.token_estimate,
      NEW.changed_version) THEN
    RETURN NULL;
  END IF;
  INSERT INTO memory_framechange (context_id, frame_id, version, revision, status, protected,
    retire_requested_tick, retire_due_tick, retire_reason, retire_generation, token_estimate)
  VALUES (NEW.context_id, NEW.id, NEW.changed_version, NEW.revision, NEW.status, NEW.protected,
    NEW.retire_requested_tick, NEW.retire_due_tick, NEW.retire_reason, NEW.retire_generation,
    NEW.token_estimate);
  RETURN NULL;
END $$;
