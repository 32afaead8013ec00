"""A capital dotted I (`İstanbul`) is now indexed as a plain `i` (`memory.search.textindex`):
case folding had left a combining dot above that no typed `istanbul` holds. The documents
holding such a word, written before, are queued for the index worker, which rewrites them
(search answers as before meanwhile); `manage.py rebuild_index` does it at once."""

from django.db import migrations

# A lexeme holding `i` and a combining dot above (U+0307), in a document or one of its parts.
QUEUE = """
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT d.context_id, d.frame_id, d.event_id, now()
FROM memory_searchdocument d
WHERE EXISTS (SELECT 1 FROM unnest(d.tokens) u WHERE strpos(u.lexeme, 'i' || chr(775)) > 0)
   OR EXISTS (SELECT 1 FROM memory_searchpart p CROSS JOIN LATERAL unnest(p.tokens) u
              WHERE p.document_id = d.id AND strpos(u.lexeme, 'i' || chr(775)) > 0)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0036_search_possessive_stems"),
    ]

    operations = [migrations.RunSQL(QUEUE, migrations.RunSQL.noop)]
