"""Errors the memory layer raises; each carries a stable code from `ErrorCode`, which
also declares the HTTP status a response carrying that code answers with."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Every code a client can meet as `error.code`, each with its HTTP status, declared once.

    The API's status table and the OpenAPI schema's enum of codes are derived from this; the
    docs' status table is checked against it (tests/test_docs.py). A rejected transaction answers with its first failing operation's code
    (422) and lists every failing operation in `details`; docs/transactions.md and
    docs/rest.md say what each code means and what to do about it.
    """

    status: int

    def __new__(cls, value: str, status: int) -> ErrorCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.status = status
        return member

    # 400: the request itself is malformed
    PARSE_ERROR = "parse_error", 400
    INVALID_REQUEST = "invalid_request", 400
    INVALID_KIND = "invalid_kind", 400
    INVALID_CURSOR = "invalid_cursor", 400
    INVALID_BASE_VERSION = "invalid_base_version", 400
    INVALID_REF = "invalid_ref", 400
    INVALID_OFFSET = "invalid_offset", 400
    INVALID_LENGTH = "invalid_length", 400
    INVALID_HOST = "invalid_host", 400
    INVALID_DEPTH = "invalid_depth", 400
    INVALID_DIRECTION = "invalid_direction", 400
    INVALID_FLAG = "invalid_flag", 400
    INVALID_FRAME_ID = "invalid_frame_id", 400
    INVALID_LIMIT = "invalid_limit", 400
    INVALID_MAX_NODES = "invalid_max_nodes", 400
    INVALID_QUERY = "invalid_query", 400
    INVALID_STATUS = "invalid_status", 400
    INVALID_THREAD = "invalid_thread", 400
    INVALID_TIME = "invalid_time", 400
    INVALID_TYPE = "invalid_type", 400
    INVALID_VIEW_VERSION = "invalid_view_version", 400
    INVALID_ARGUMENTS = "invalid_arguments", 400
    UNKNOWN_EVALUATION = "unknown_evaluation", 400
    INVALID_VERSION = "invalid_version", 400
    INVALID_EXPORT = "invalid_export", 400
    INVALID_SIGNATURE = "invalid_signature", 400
    CONFLICTING_FILTERS = "conflicting_filters", 400
    # 401, 403, 404, 405, 406: who may ask what
    NOT_AUTHENTICATED = "not_authenticated", 401
    PERMISSION_DENIED = "permission_denied", 403
    SCOPE_INSUFFICIENT = "scope_insufficient", 403
    NOT_FOUND = "not_found", 404
    METHOD_NOT_ALLOWED = "method_not_allowed", 405
    NOT_ACCEPTABLE = "not_acceptable", 406
    # 409: the state moved or forbids it now; re-read and retry
    CONFLICT = "conflict", 409
    STALE_CURSOR = "stale_cursor", 409
    STALE_VIEW = "stale_view", 409
    MAINTENANCE_REQUIRED = "maintenance_required", 409
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused", 409
    CONTEXT_EXISTS = "context_exists", 409
    CONTEXT_FROZEN = "context_frozen", 409
    # 413, 415, 429: size, media type, rate
    TOO_LARGE = "too_large", 413
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type", 415
    THROTTLED = "throttled", 429
    # 422: a transaction or an append broke a rule
    RULE_VIOLATION = "rule_violation", 422
    UNKNOWN_REF = "unknown_ref", 422
    UNKNOWN_RELATION = "unknown_relation", 422
    SELF_CITATION = "self_citation", 422
    FRAME_EXISTS = "frame_exists", 422
    FRAME_RETIRED = "frame_retired", 422
    FRAME_PROTECTED = "frame_protected", 422
    RELATION_EXISTS = "relation_exists", 422
    NOT_OBSERVATION = "not_observation", 422
    REQUEST_PENDING = "request_pending", 422
    # A reply taken apart (R57, R59; docs/agents.md): refusals of one part of a reply, and
    # a pending action's cancellation
    UNKNOWN_TOOL = "unknown_tool", 400
    DUPLICATE_TRANSACTION = "duplicate_transaction", 409
    REPLY_REJECTED = "reply_rejected", 409
    NOT_AN_ACTION = "not_an_action", 422
    ACTION_NOT_PENDING = "action_not_pending", 409
    NOT_ERASABLE = "not_erasable", 422
    SECRET_DETECTED = "secret_detected", 422
    # 500: our fault, logged
    INTERNAL_ERROR = "internal_error", 500
    # 503: PostgreSQL unreachable; nothing was written
    DATABASE_UNAVAILABLE = "database_unavailable", 503
    # 503 from the readiness check: the database lacks tables or migrations this code needs
    MIGRATIONS_PENDING = "migrations_pending", 503


# A query parameter or body field whose own code the docs list: a failure of it alone answers
# with that code (InvalidField here; `memory.requests.refusals.validation_code` for request models),
# not the generic one.
CODE_BY_FIELD: dict[str, ErrorCode] = {
    "limit": ErrorCode.INVALID_LIMIT,
    "status": ErrorCode.INVALID_STATUS,
    "depth": ErrorCode.INVALID_DEPTH,
    "offset": ErrorCode.INVALID_OFFSET,
    "length": ErrorCode.INVALID_LENGTH,
    "kind": ErrorCode.INVALID_KIND,
    "thread": ErrorCode.INVALID_THREAD,
    "type": ErrorCode.INVALID_TYPE,
    "since": ErrorCode.INVALID_TIME,
    "until": ErrorCode.INVALID_TIME,
    "q": ErrorCode.INVALID_QUERY,
    "frame_id": ErrorCode.INVALID_FRAME_ID,
    # Filters naming a frame: blank or too long, they name none (a `source` shaped like an
    # event ref is `invalid_ref`, from `memory.read.history.check_ref`).
    "frame": ErrorCode.INVALID_FRAME_ID,
    "subject": ErrorCode.INVALID_FRAME_ID,
    "object": ErrorCode.INVALID_FRAME_ID,
    "source": ErrorCode.INVALID_FRAME_ID,
    "direction": ErrorCode.INVALID_DIRECTION,
    "max_nodes": ErrorCode.INVALID_MAX_NODES,
    "view_version": ErrorCode.INVALID_VIEW_VERSION,
    "base_version": ErrorCode.INVALID_BASE_VERSION,
    "as_of": ErrorCode.INVALID_VERSION,
    "at_version": ErrorCode.INVALID_VERSION,
    "from": ErrorCode.INVALID_VERSION,
    "to": ErrorCode.INVALID_VERSION,
    "cursor": ErrorCode.INVALID_CURSOR,
    "include_bodies": ErrorCode.INVALID_FLAG,
    "include_events": ErrorCode.INVALID_FLAG,
    "include_removed": ErrorCode.INVALID_FLAG,
    "as_observation": ErrorCode.INVALID_FLAG,
    "transactions": ErrorCode.INVALID_FLAG,
    "frozen": ErrorCode.INVALID_FLAG,
    "continuation": ErrorCode.INVALID_FLAG,
    "include_instructions": ErrorCode.INVALID_FLAG,
}


def field_code(field: str) -> ErrorCode:
    """The code of a failure of `field`: its own (`events[0].thread` counts as `thread`), else
    `invalid_request`."""
    return CODE_BY_FIELD.get(field.rsplit(".", 1)[-1], ErrorCode.INVALID_REQUEST)


class MorphzError(Exception):
    """Base for domain errors. `code` is stable and decides the HTTP status; `details` is a
    JSON-able list."""

    code: ErrorCode = ErrorCode.INVALID_REQUEST

    def __init__(
        self, message: str, *, code: ErrorCode | None = None, details: list[Any] | None = None
    ):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details or []

    @property
    def status(self) -> int:
        """The HTTP status of a response carrying this error."""
        return self.code.status


class InvalidRequest(MorphzError):
    code = ErrorCode.INVALID_REQUEST


class InvalidField(InvalidRequest):
    """A request field's value is refused; the code is the field's own (`field_code`), and
    `details` name the field with any `extra` facts (`min`, `max`, `allowed`, ...)."""

    def __init__(self, field: str, message: str, **extra: Any) -> None:
        super().__init__(message, code=field_code(field), details=[{"field": field, **extra}])


class NotFound(MorphzError):
    code = ErrorCode.NOT_FOUND


class ParseError(MorphzError):
    code = ErrorCode.PARSE_ERROR


class RuleViolation(MorphzError):
    """A transaction broke a rule; `details` lists each failing operation with its index."""

    code = ErrorCode.RULE_VIOLATION


class Conflict(MorphzError):
    code = ErrorCode.CONFLICT


class StaleCursor(MorphzError):
    code = ErrorCode.STALE_CURSOR


class StaleView(MorphzError):
    code = ErrorCode.STALE_VIEW


class MaintenanceRequired(MorphzError):
    code = ErrorCode.MAINTENANCE_REQUIRED


class ContextFrozen(MorphzError):
    """The context is frozen (R54): every write is refused; reads, recall, search and forks
    still work."""

    code = ErrorCode.CONTEXT_FROZEN

    def __init__(self, slug: str) -> None:
        super().__init__(
            f"context {slug!r} is frozen: writes are refused; reads, recall, search and forks "
            'still work (unfreeze it with PATCH {"frozen": false})',
            details=[{"context": slug}],
        )


class TokenNotLive(MorphzError):
    """The agent token a write was made with is revoked, or its context deleted, as the
    write's own check found (`memory.contexts.send_token_check`, sent after the context row
    lock): nothing was written, and nothing is recorded against the context."""

    code = ErrorCode.NOT_AUTHENTICATED

    def __init__(self) -> None:
        super().__init__("unknown or revoked token")
