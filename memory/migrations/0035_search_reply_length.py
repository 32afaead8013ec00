"""A reply's length now counts the words it borrows from the turn it answers
(`memory.search.vectors.event_vector`). The documents of replies written before (those
holding a borrowed word, marked ``^``) are queued for the index worker, which rewrites them
(search answers as before meanwhile); `manage.py rebuild_index` does it at once."""

from django.db import migrations

# `'^':*` matches every lexeme starting with the mark (`vectors.REPLY` when this was written).
QUEUE = """
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT d.context_id, NULL, d.event_id, now()
FROM memory_searchdocument d
WHERE d.event_id IS NOT NULL AND d.kind IN ('user_message', 'agent_message')
  AND d.tokens @@ '''^'':*'::tsquery
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0034_search_invisible_format_characters"),
    ]

    operations = [migrations.RunSQL(QUEUE, migrations.RunSQL.noop)]
