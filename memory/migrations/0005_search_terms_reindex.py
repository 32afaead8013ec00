"""Search documents are now weighted tsvectors of the new terms (identifier parts, Korean
syllable pairs, emoji): every existing document is queued for the index worker,
which rewrites it from the facts (search keeps answering from the old documents meanwhile).
`manage.py rebuild_index` does the same at once."""

from django.db import migrations

REINDEX = """
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT context_id, frame_id, event_id, now() FROM memory_searchdocument
ORDER BY id
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0004_observation_budget")]

    operations = [migrations.RunSQL(REINDEX, reverse_sql=migrations.RunSQL.noop)]
