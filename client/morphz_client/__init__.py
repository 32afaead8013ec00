"""Typed Python client for the Morphz REST API."""

from morphz_client.client import MorphzClient
from morphz_client.errors import (
    AuthError,
    ConflictError,
    DatabaseUnavailableError,
    IdempotencyKeyReusedError,
    InvalidRequestError,
    MaintenanceRequiredError,
    MorphzAPIError,
    MorphzError,
    NotFoundError,
    ParseError,
    RuleViolationError,
    ServerError,
    StaleCursorError,
    StaleViewError,
    ThrottledError,
    TooLargeError,
)

__all__ = [
    "AuthError",
    "ConflictError",
    "DatabaseUnavailableError",
    "IdempotencyKeyReusedError",
    "InvalidRequestError",
    "MaintenanceRequiredError",
    "MorphzAPIError",
    "MorphzClient",
    "MorphzError",
    "NotFoundError",
    "ParseError",
    "RuleViolationError",
    "ServerError",
    "StaleCursorError",
    "StaleViewError",
    "ThrottledError",
    "TooLargeError",
]
