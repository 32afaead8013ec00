-- memory_maintenance_log, version 1: a history log trigger (R52)
-- Created by migration 0007; the database must hold exactly this text
-- (tests/memory/test_sql_functions_match_database.py). To change it, add
-- memory_maintenance_log_v2.sql and a migration that runs it; keep this file for that migration's past.
CREATE OR REPLACE FUNCTION memory_maintenance_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('morphz.copying', true) = 'on' THEN RETURN NULL; END IF;
  INSERT INTO memory_maintenancechange (context_id, version, last_seq, in_maintenance)
  VALUES (NEW.id, NEW.version, NEW.last_seq, NEW.in_maintenance);
  RETURN NULL;
END $$;
