"""Search ranks like BM25: documents keep their length in words, and identifier
parts, Korean syllable pairs and payload words are secondary lexemes (``~part``). Every
existing document is queued for the index worker, which rewrites it from the facts
(search keeps answering from the old documents meanwhile); `manage.py rebuild_index` does
it at once."""

from django.db import migrations, models

REINDEX = """
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT context_id, frame_id, event_id, now() FROM memory_searchdocument
ORDER BY id
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_settings_log")]

    operations = [
        migrations.AddField(
            model_name="searchdocument",
            name="length",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunSQL(REINDEX, reverse_sql=migrations.RunSQL.noop),
    ]
