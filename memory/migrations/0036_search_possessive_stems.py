"""A word with an apostrophe ("customer's", "buyer’s") now has its English stem indexed
beside it (`memory.search.vectors.stem`), so the noun finds its possessive. The documents
holding such a word, written before, are queued for the index worker, which rewrites them
(search answers as before meanwhile); `manage.py rebuild_index` does it at once."""

from django.db import migrations

# A lexeme of Latin letters around an apostrophe (`vectors.APOSTROPHES` when this was
# written), in a document or in one of its parts.
QUEUE = """
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT d.context_id, d.frame_id, d.event_id, now()
FROM memory_searchdocument d
WHERE EXISTS (SELECT 1 FROM unnest(d.tokens) u WHERE u.lexeme ~ '^[a-z]+[''\u2019\u2018]')
   OR EXISTS (SELECT 1 FROM memory_searchpart p CROSS JOIN LATERAL unnest(p.tokens) u
              WHERE p.document_id = d.id AND u.lexeme ~ '^[a-z]+[''\u2019\u2018]')
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0035_search_reply_length"),
    ]

    operations = [migrations.RunSQL(QUEUE, migrations.RunSQL.noop)]
