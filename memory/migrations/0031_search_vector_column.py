"""Where the server has pgvector (`pg_available_extensions`), the documents' embeddings are
kept as `vector` values too, beside their float16 bytes: the extension, an untyped column (an
endpoint's dimension is not the bundled model's), a trigger filling it from the bytes when a
writer gives only those, and the existing documents backfilled. Where it has not, or the role
may not create the extension, nothing changes (search compares vectors in Python there)."""

from typing import Any

from django.db import DatabaseError, migrations, transaction

from memory.sql.functions import definition

FORWARD = [
    "ALTER TABLE memory_searchdocument ADD COLUMN embedding_vector vector",
    definition("morphz_half_vector"),
    definition("morphz_search_embedding_vector"),
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
