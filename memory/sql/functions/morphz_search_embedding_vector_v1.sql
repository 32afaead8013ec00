-- A writer giving the vector (the index worker, a fork's copy) is trusted; one giving only
-- the bytes (re-embedding, older code) has them decoded here.
CREATE OR REPLACE FUNCTION morphz_search_embedding_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.embedding IS NULL OR octet_length(NEW.embedding) = 0 THEN
    NEW.embedding_vector := NULL;
  ELSIF TG_OP = 'INSERT' THEN
    IF NEW.embedding_vector IS NULL THEN
      NEW.embedding_vector := morphz_half_vector(NEW.embedding);
    END IF;
  ELSIF NEW.embedding IS DISTINCT FROM OLD.embedding
        AND NEW.embedding_vector IS NOT DISTINCT FROM OLD.embedding_vector THEN
    NEW.embedding_vector := morphz_half_vector(NEW.embedding);
  END IF;
  RETURN NEW;
END
$$
