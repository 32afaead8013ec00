"""The current definition of each database function, one file per version.

`CURRENT` names the file that holds what the migrated database runs; a test compares the
database's text with it (tests/memory/sql/test_functions_match_database.py). A new version
is a new file (`name_v<n+1>.sql`) and a migration that runs `definition(name)`.
"""

from __future__ import annotations

import re

from memory.sql import sql_file

CURRENT = {
    "morphz_write_commit": "morphz_write_commit_v2.sql",
    "memory_frame_log": "memory_frame_log_v1.sql",
    "memory_event_log": "memory_event_log_v1.sql",
    "memory_maintenance_log": "memory_maintenance_log_v1.sql",
    "morphz_half_vector": "morphz_half_vector_v1.sql",
    "morphz_search_embedding_vector": "morphz_search_embedding_vector_v1.sql",
}
# Defined only where the server has pgvector (migration 0031, `memory.search.vector_column`).
WITH_PGVECTOR = frozenset({"morphz_half_vector", "morphz_search_embedding_vector"})

_BODY = re.compile(r"AS \$\$(.*)\$\$;?\s*\Z", re.S)


def definition(name: str) -> str:
    """The `CREATE OR REPLACE FUNCTION` statement of `name`'s current version."""
    return sql_file("memory.sql.functions", CURRENT[name])


def body(name: str) -> str:
    """The source between the `$$` of `name`'s current definition (PostgreSQL's `prosrc`)."""
    found = _BODY.search(definition(name))
    if found is None:
        raise ValueError(f"{CURRENT[name]} has no $$ body")
    return found.group(1)
