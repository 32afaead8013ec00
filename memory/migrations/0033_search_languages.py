"""A query is stemmed only in the languages its context's documents hold (`SearchLanguage`,
written by the index worker with the documents): stemming each query word in every language
of its script doubled an English context's search time. The contexts' languages are read
here from the marked stems already indexed (``=fr:annul``, ``^=fr:annul`` in a reply's
borrowed words), in documents and their parts, one prefix lookup of the word index per
language; documents 0032 queued are added when the worker rewrites them."""

import django.db.models.deletion
from django.db import migrations, models

# `memory.search.languages.SNOWBALL`'s codes when this was written.
CODES = (
    "ar ca cs da de el eo es et eu fa fi fr ga hi hu hy id it lt ne nl no pl pt ro ru sr sv ta tr"
)
# A language's marked stems, said or borrowed by a reply: a prefix lookup of the word index.
PREFIXES = "'''={code}:'':* | ''^={code}:'':*'::tsquery"
HELD = " UNION ".join(
    f"SELECT t.context_id, '{code}' FROM {table} t "  # noqa: S608  (constants)
    f"WHERE t.tokens @@ {PREFIXES.format(code=code)}"
    for table in ("memory_searchdocument", "memory_searchpart")
    for code in CODES.split()
)
BACKFILL = f"""
INSERT INTO memory_searchlanguage (context_id, language)
SELECT context_id, language FROM ({HELD}) AS held(context_id, language)
ORDER BY 1, 2
ON CONFLICT DO NOTHING
"""  # noqa: S608  (constants)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0032_stems_beyond_english"),
    ]

    operations = [
        migrations.CreateModel(
            name="SearchLanguage",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("language", models.CharField(max_length=8)),
                (
                    "context",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="memory.context",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("context", "language"), name="search_language_once"
                    )
                ],
            },
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
