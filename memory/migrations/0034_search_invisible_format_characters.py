r"""Invisible format characters (soft hyphen, zero-width space and joiners, bidi controls,
word joiner, ...) no longer split or stick to words: a document written before holds
``wom\u00adbat`` or ``invoice\u202c``, which the word's query does not find. The events
and frames whose text holds one are queued for the index worker, which rewrites them
(search answers as before meanwhile); `manage.py rebuild_index` does it at once."""

from django.db import migrations

# Unicode category Cf: `memory.search.format_characters.format_characters()` when this was
# written (Python's Unicode 14.0), as ranges.
FORMAT = (
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]"
)
QUEUE = f"""
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT d.context_id, NULL, d.event_id, now()
FROM memory_searchdocument d JOIN memory_event e ON e.id = d.event_id
WHERE e.content ~ '{FORMAT}' OR e.payload::jsonb::text ~ '{FORMAT}'
UNION ALL
SELECT d.context_id, d.frame_id, NULL, now()
FROM memory_searchdocument d JOIN memory_frame f ON f.id = d.frame_id
WHERE f.body::jsonb::text ~ '{FORMAT}'
"""  # noqa: S608  (a constant)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0033_search_languages"),
    ]

    operations = [migrations.RunSQL(QUEUE, migrations.RunSQL.noop)]
