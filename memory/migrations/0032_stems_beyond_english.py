"""Stems beyond English: a document written before in French, German, Russian, ... has
no stems of its language until it is rewritten. The events and frames whose text has a
letter of the scripts Snowball stems beyond ASCII (accented Latin, Cyrillic, Greek, Arabic,
Armenian, Devanagari, Tamil) are queued for the index worker, which rewrites them with
their stems; search answers as before meanwhile. A text of plain ASCII letters in another
language gets its stems when rewritten (`manage.py rebuild_index`)."""

from django.db import migrations

LETTERS = "[À-ÖØ-öø-ɏḀ-ỿͰ-Ͽἀ-῿Ѐ-ӿԱ-֏؀-ۿऀ-ॿஂ-௿]"
QUEUE = f"""
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT d.context_id, NULL, d.event_id, now()
FROM memory_searchdocument d JOIN memory_event e ON e.id = d.event_id
WHERE e.content ~ '{LETTERS}'
UNION ALL
SELECT d.context_id, d.frame_id, NULL, now()
FROM memory_searchdocument d JOIN memory_frame f ON f.id = d.frame_id
WHERE f.body::jsonb::text ~ '{LETTERS}'
"""  # noqa: S608  (a constant)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0031_search_vector_column"),
    ]

    operations = [migrations.RunSQL(QUEUE, migrations.RunSQL.noop)]
