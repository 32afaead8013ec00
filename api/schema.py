"""OpenAPI annotations shared by the views: one error component, described per status."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse

from api.shapes import ErrorSerializer

ERROR_DESCRIPTIONS = {
    400: "malformed input: `invalid_request`, `parse_error` (with line and column), "
    "`invalid_cursor`",
    401: "`not_authenticated`: no token, an unknown or a revoked token",
    403: "`permission_denied` (e.g. a session request without a CSRF token)",
    404: "`not_found`: unknown, or not reachable with this token (never another context's data)",
    405: "`method_not_allowed`",
    409: "`conflict` (names each changed item), `stale_cursor`, `stale_view`, "
    "`maintenance_required`, `idempotency_key_reused`",
    413: "`too_large`: the body is over the size limit; nothing was written",
    415: "`unsupported_media_type`: send application/json",
    422: "a transaction breaks a rule (`frame_exists`, `unknown_ref`, `frame_retired`, "
    "`frame_protected`, `request_pending`, ...); `details` lists each failing operation "
    "with its `index`",
    429: "`throttled`: too many requests; `details` says when to retry",
}

READ_ERRORS = (400, 401, 404, 429)
WRITE_ERRORS = (400, 401, 403, 404, 413, 415, 429)


def responses(ok: dict[int, Any], *errors: int) -> dict[int, Any]:
    """`ok` responses plus the shared error component for each status in `errors`."""
    out: dict[int, Any] = dict(ok)
    for code in sorted(set(errors)):
        out[code] = OpenApiResponse(ErrorSerializer, description=ERROR_DESCRIPTIONS[code])
    return out
