"""Search indexes a flag (``🇺🇸``) and a ZWJ sequence (``👨‍👩‍👧``) as one emoji each, no
longer as their regional indicators or the emoji they join. Documents written before hold
a flag as two regional-indicator lexemes, which a flag's query no longer matches: every
document holding a regional indicator (or the black flag that opens a subdivision flag) is
queued for the index worker, which rewrites it from the facts (found through the word
index, so only those documents are read). A ZWJ sequence's old lexemes are its parts side
by side, which its query matches as a part (half weight) until `manage.py rebuild_index`
rewrites every document."""

from django.db import migrations

FLAG_LEXEMES = [chr(c) for c in range(0x1F1E6, 0x1F200)] + ["\U0001f3f4"]
HOLDS_A_FLAG = " | ".join(f"'{lexeme}' | '~{lexeme}'" for lexeme in FLAG_LEXEMES)

REINDEX = """
INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at)
SELECT context_id, frame_id, event_id, now() FROM memory_searchdocument
WHERE tokens @@ %s::tsquery
ORDER BY id
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0014_search_document_embedding")]

    operations = [
        migrations.RunSQL([(REINDEX, [HOLDS_A_FLAG])], reverse_sql=migrations.RunSQL.noop)
    ]
