"""Events beyond PostgreSQL's 1 MB per tsvector are indexed in parts: the
document keeps its first lexemes, SearchPart rows hold the rest. `parts` has a database
default (no table rewrite; bulk SQL writers need not name it). Events of LARGE characters
or more, the only ones whose lexemes can pass the bound, are queued for the index worker,
which rewrites them in parts (search answers from their first lexemes meanwhile)."""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.db.models.deletion
from django.db import migrations, models

LARGE = 100_000  # characters: 1 MB of lexemes needs at least this much text
QUEUE_LARGE_EVENTS = f"""
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT e.context_id, NULL, e.id, now() FROM memory_event e WHERE e.size_chars >= {LARGE}
"""  # noqa: S608  (a constant)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0029_merge_round_ten"),
    ]

    operations = [
        migrations.AddField(
            model_name="searchdocument",
            name="parts",
            field=models.PositiveSmallIntegerField(db_default=0, default=0),
        ),
        migrations.CreateModel(
            name="SearchPart",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.PositiveSmallIntegerField()),
                ("tokens", django.contrib.postgres.search.SearchVectorField()),
                (
                    "context",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="memory.context",
                    ),
                ),
                (
                    "document",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="memory.searchdocument",
                    ),
                ),
            ],
            options={
                "indexes": [
                    django.contrib.postgres.indexes.GinIndex(
                        fields=["tokens"], name="search_part_tokens_gin"
                    ),
                    models.Index(fields=["context"], name="search_part_context_idx"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("document", "number"), name="search_part_number"
                    )
                ],
            },
        ),
        migrations.RunSQL(QUEUE_LARGE_EVENTS, migrations.RunSQL.noop),
    ]
