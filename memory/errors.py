"""Errors the memory layer raises; each carries a stable code the API maps to a status."""

from __future__ import annotations

from typing import Any


class MorphzError(Exception):
    """Base for domain errors. `code` is stable; `details` is a JSON-able list."""

    code = "invalid_request"

    def __init__(self, message: str, *, code: str | None = None, details: list[Any] | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details or []


class InvalidRequest(MorphzError):
    code = "invalid_request"


class NotFound(MorphzError):
    code = "not_found"


class ParseError(MorphzError):
    code = "parse_error"


class RuleViolation(MorphzError):
    """A transaction broke a rule; `details` lists each failing operation with its index."""

    code = "rule_violation"


class Conflict(MorphzError):
    code = "conflict"


class StaleCursor(MorphzError):
    code = "stale_cursor"


class StaleView(MorphzError):
    code = "stale_view"


class MaintenanceRequired(MorphzError):
    code = "maintenance_required"


class ContextFrozen(MorphzError):
    """The context is frozen (R54): every write is refused; reads, recall, search and forks
    still work."""

    code = "context_frozen"

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

    code = "not_authenticated"

    def __init__(self) -> None:
        super().__init__("unknown or revoked token")
