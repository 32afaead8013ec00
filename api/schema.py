"""OpenAPI annotations shared by the views: one error component, described per status."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse

from api.shapes import ErrorSerializer
from memory.errors import ErrorCode

# What an error status means; the codes each status answers with are read from ErrorCode.
ERROR_SUMMARIES = {
    400: "malformed input (a `parse_error` gives the line and column)",
    401: "no token, an unknown or a revoked token",
    403: "not allowed (e.g. a session request without a CSRF token)",
    404: "unknown, or not reachable with this token (never another context's data)",
    405: "the method is not allowed",
    409: "the state moved or forbids it now (`conflict` names each changed item)",
    413: "the body is over the size limit; nothing was written",
    415: "send application/json",
    422: "a transaction breaks a rule; `details` lists each failing operation with its `index`",
    429: "too many requests; `details` says when to retry",
    503: "the database cannot serve requests now; retry after `Retry-After` seconds",
}


def error_description(status: int) -> str:
    """The schema's description of an error `status`: its meaning and every code it carries."""
    codes = ", ".join(f"`{code}`" for code in ErrorCode if code.status == status)
    return f"{ERROR_SUMMARIES[status]}: {codes}"


READ_ERRORS = (400, 401, 404, 429)
WRITE_ERRORS = (400, 401, 403, 404, 413, 415, 429)


def responses(ok: dict[int, Any], *errors: int) -> dict[int, Any]:
    """`ok` responses plus the shared error component for each status in `errors`."""
    out: dict[int, Any] = dict(ok)
    for code in sorted(set(errors)):
        out[code] = OpenApiResponse(ErrorSerializer, description=error_description(code))
    return out
