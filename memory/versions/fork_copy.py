"""The SQL that copies a context into its fork (R53): the `fork_` statements of
memory/versions/queries.sql, in order; `memory.versions.forks` says how and under which lock
they run.
"""

from __future__ import annotations

from memory.search import vector_column
from memory.sql import statements
from memory.versions.points import Point

# The statements in the one order the id maps and foreign keys need. `{at}`: the present
# state reads the plain tables (`now`, cheaper than the as-of queries), a past point `at`.
_COPY = (
    "copying_on",
    "fork_drop_maps",
    "fork_map_evaluations",
    "fork_map_events",
    "fork_map_records",
    "fork_map_frames",
    "fork_analyze_maps",
    "fork_evaluations",
    "fork_events_{at}",
    "fork_records",
    "fork_frames_{at}",
    "fork_revisions",
    "fork_frame_changes",
    "fork_event_changes",
    "fork_settings_changes",
    "fork_maintenance_changes",
    "fork_relations_{at}",
    "fork_retirements",
    "fork_event_documents",  # with `vector_column.copy_parts()`
    "fork_frame_documents",
    "fork_search_languages",
    "fork_frame_intents",
    "fork_event_intents",
    "fork_drop_map_tables",
)


def copy_statements(point: Point) -> list[str]:
    """The copy, statement by statement; %(dst)s is the new context's id."""
    at = "now" if point.present else "at"
    sql = statements("memory.versions")
    vector = vector_column.copy_parts()
    return [
        sql[name].format(**vector) if name.endswith("_documents") else sql[name.format(at=at)]
        for name in _COPY
    ]
