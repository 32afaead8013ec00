"""Each table's column lists, declared once (tests/memory/sql/test_columns_match_models.py
checks them against the models). `.sql` files use them as `{{name}}` or, with a table
alias, `{{f.name}}`; Python reads rows with the same tuples (`memory.sql.by_name`).
"""

from __future__ import annotations

# A frame's state: what a commit decides and `morphz_write_commit` stores, what the change
# log (memory_framechange) records besides the body and sources, in one order.
FRAME_STATE = (
    "revision",
    "body",
    "sources",
    "status",
    "protected",
    "retire_requested_tick",
    "retire_due_tick",
    "retire_reason",
    "retire_generation",
    "token_estimate",
)
# What the commit path loads of a frame.
FRAME_LOADED = ("id", "frame_id", *FRAME_STATE, "created_version", "changed_version")
# Every column of memory_frame, in the model's order (copies, as-of rows).
FRAME_ALL = (
    "id",
    "context_id",
    "frame_id",
    *FRAME_STATE,
    "created_version",
    "changed_version",
    "updated_at",
)
# What a copy of a frame carries over (memory.versions.fork_copy gives new ids).
FRAME_COPIED = FRAME_ALL[2:]
# Every column of memory_event and memory_relation, in the models' order.
EVENT_ALL = (
    "id",
    "context_id",
    "seq",
    "kind",
    "thread",
    "content",
    "payload",
    "created_at",
    "idempotency_key",
    "size_chars",
    "token_estimate",
    "is_observation",
    "active",
    "status_version",
    "pending",
    "evaluation_id",
    "delivers",
    "request_state",
    "delivered_by_seq",
)
RELATION_ALL = (
    "id",
    "context_id",
    "subject_id",
    "name",
    "object_id",
    "created_version",
    "removed_version",
)
# memory_framechange's logged state: the frame's state without its body and sources.
FRAME_LOGGED = tuple(c for c in FRAME_STATE if c not in ("body", "sources"))
# What the commit path loads of an event.
EVENT_LOADED = (
    "id",
    "seq",
    "kind",
    "is_observation",
    "active",
    "request_state",
    "token_estimate",
    "status_version",
)
# A context's settings, in the model's order (memory.contexts.SETTINGS_FIELDS).
CONTEXT_SETTINGS = (
    "grace_ticks",
    "capacity_tokens",
    "pressure_percent",
    "maintenance_percent",
    "maintenance_exit_percent",
    "observation_budget_tokens",
)
# The context row the commit path locks (memory.locking.LockedContext, read by name).
CONTEXT_LOCKED = (
    "id",
    "slug",
    "version",
    "tick",
    "last_seq",
    *CONTEXT_SETTINGS,
    "used_tokens",
    "in_maintenance",
    "frozen",
)

# What a recall node shows of a frame and of an event, besides the key, the sources and the
# texts the statements size and cut (memory.recall.rows).
RECALL_FRAME = (
    "frame_id",
    "revision",
    "status",
    "protected",
    "retire_requested_tick",
    "retire_due_tick",
    "retire_reason",
)
RECALL_EVENT = ("kind", "thread", "is_observation", "active", "created_at")

# Every column of memory_apitoken and memory_context, in the models' order: a token is
# checked with its context on every API request (memory.contexts.authenticate_token).
TOKEN_ALL = (
    "id",
    "context_id",
    "name",
    "key_prefix",
    "key_hash",
    "created_at",
    "last_used_at",
    "revoked_at",
    "scope",
    "expires_at",
)
CONTEXT_ALL = (
    "id",
    "slug",
    "name",
    "version",
    "tick",
    "last_seq",
    *CONTEXT_SETTINGS,
    "used_tokens",
    "in_maintenance",
    "created_at",
    "frozen",
    "forked_from_id",
    "forked_version",
    "forked_tick",
    "screening",
    "unverified_import",
    "scratch",
)

# What the index worker stages of a search document and writes (memory.search.documents).
SEARCH_STAGED = (
    "context_id",
    "frame_id",
    "event_id",
    "ref",
    "status",
    "kind",
    "thread",
    "created_at",
    "tokens",
    "length",
    "embedding",
    "embedding_model",
    "parts",
)

# Lists by the name `.sql` files use, with the table each names columns of.
REGISTRY: dict[str, tuple[str, tuple[str, ...]]] = {
    "frame_state": ("memory_frame", FRAME_STATE),
    "frame_loaded": ("memory_frame", FRAME_LOADED),
    # the body as its stored JSON text: `jsonb` would reorder its keys
    "frame_loaded_text": (
        "memory_frame",
        tuple("body::text" if c == "body" else c for c in FRAME_LOADED),
    ),
    "frame_all": ("memory_frame", FRAME_ALL),
    "frame_copied": ("memory_frame", FRAME_COPIED),
    "frame_logged": ("memory_framechange", FRAME_LOGGED),
    "event_all": ("memory_event", EVENT_ALL),
    "relation_all": ("memory_relation", RELATION_ALL),
    "event_loaded": ("memory_event", EVENT_LOADED),
    "context_locked": ("memory_context", CONTEXT_LOCKED),
    "recall_frame": ("memory_frame", RECALL_FRAME),
    "recall_event": ("memory_event", RECALL_EVENT),
    "token_all": ("memory_apitoken", TOKEN_ALL),
    "context_all": ("memory_context", CONTEXT_ALL),
    "search_staged": ("memory_searchdocument", SEARCH_STAGED),
}


def column_list(name: str, alias: str = "") -> str:
    """The registry's list `name` as SQL (`a, b`), each column after `alias.` if given."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + column for column in REGISTRY[name][1])
