"""Where the server has pgvector (`pg_available_extensions`), the documents' embeddings are
kept as `vector` values too, beside their float16 bytes: the extension, an untyped column (an
endpoint's dimension is not the bundled model's), a trigger filling it from the bytes when a
writer gives only those, and the existing documents backfilled. Where it has not, or the role
may not create the extension, nothing changes (search compares vectors in Python there)."""

from typing import Any

from django.db import DatabaseError, migrations, transaction

# A float16 (little-endian, as numpy stores it) decoded exactly: sign, exponent, mantissa.
HALF_VECTOR = """
CREATE FUNCTION morphz_half_vector(b bytea) RETURNS vector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT CASE WHEN octet_length(b) > 1 THEN ARRAY(
  SELECT ((CASE WHEN (get_byte(b, 2 * i + 1) >> 2) & 31 = 0
            THEN (((get_byte(b, 2 * i + 1) & 3) << 8) | get_byte(b, 2 * i)) * 2 ^ -24
            ELSE (1024 + (((get_byte(b, 2 * i + 1) & 3) << 8) | get_byte(b, 2 * i)))
                 * 2 ^ (((get_byte(b, 2 * i + 1) >> 2) & 31) - 25) END)
          * (1 - 2 * (get_byte(b, 2 * i + 1) >> 7)))::real
  FROM generate_series(0, octet_length(b) / 2 - 1) AS i ORDER BY i)::vector END
$$
"""
# A writer giving the vector (the index worker, a fork's copy) is trusted; one giving only
# the bytes (re-embedding, older code) has them decoded here.
KEEP_IN_STEP = """
CREATE FUNCTION morphz_search_embedding_vector() RETURNS trigger LANGUAGE plpgsql AS $$
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
"""
FORWARD = [
    "ALTER TABLE memory_searchdocument ADD COLUMN embedding_vector vector",
    HALF_VECTOR,
    KEEP_IN_STEP,
    "CREATE TRIGGER memory_searchdocument_embedding_vector "
    "BEFORE INSERT OR UPDATE OF embedding ON memory_searchdocument "
    "FOR EACH ROW EXECUTE FUNCTION morphz_search_embedding_vector()",
    "UPDATE memory_searchdocument SET embedding_vector = morphz_half_vector(embedding) "
    "WHERE octet_length(embedding) > 0",
]
BACKWARD = [
    "DROP TRIGGER IF EXISTS memory_searchdocument_embedding_vector ON memory_searchdocument",
    "DROP FUNCTION IF EXISTS morphz_search_embedding_vector()",
    "ALTER TABLE memory_searchdocument DROP COLUMN IF EXISTS embedding_vector",
    "DROP FUNCTION IF EXISTS morphz_half_vector(bytea)",
]


def _forget() -> None:
    from memory.search.vector_column import forget

    forget()


def add_vectors(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if cursor.fetchone() is None:
            return
        try:
            with transaction.atomic(using=connection.alias):
                cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except DatabaseError:
            return  # a role that may not create it: as if the server had none
        for statement in FORWARD:
            cursor.execute(statement)
    _forget()


def drop_vectors(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        for statement in BACKWARD:
            cursor.execute(statement)
    _forget()


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0030_search_parts"),
    ]

    operations = [migrations.RunPython(add_vectors, drop_vectors)]
