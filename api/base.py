"""What every context endpoint shares: size limit, access check, author, cursors.

A view under /api/v1/contexts/{slug}/ subclasses `ContextAPIView`; by the time its handler
runs, `self.ctx` is the context the caller may use. A token reaches its own context only:
another slug answers 404 exactly like a slug that does not exist, so a token learns nothing
about other contexts. Staff people with a Django session (CSRF enforced by DRF's
SessionAuthentication) reach every context.
"""

from __future__ import annotations

from typing import Any, TypeVar
from urllib.parse import unquote_to_bytes

import psycopg
from django.conf import settings
from django.db import DatabaseError
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.auth import request_bearer
from api.errors import ApiError, TooLarge
from api.parsers import StrictJSONParser, check_text
from api.requests import body
from memory.contexts import forget_token, token_is_live, token_refusal
from memory.errors import ErrorCode, TokenNotLive
from memory.idempotency import KEY_MAX, check_key
from memory.models import ApiToken, Context
from memory.read.access import context_for_person
from memory.replicas import Floor, ReplicaRead, start_read
from memory.requests.contexts import ReadFloorBody, ReadFloorQuery
from memory.requests.strict import text_problem
from memory.scopes import ACTS, READ, WRITE, require
from memory.tx.engine import Author

T = TypeVar("T")


def check_content_length(request: Request) -> None:
    raw = request.META.get("CONTENT_LENGTH") or "0"
    try:
        length = int(raw)
    except ValueError:
        raise ApiError(ErrorCode.INVALID_REQUEST, "Content-Length is not a number") from None
    if length > settings.MAX_REQUEST_BYTES:
        raise TooLarge(settings.MAX_REQUEST_BYTES)


def _encoding_failures(query_string: str) -> dict[str, list[str]]:
    """Each query parameter percent-decodes to UTF-8: Django would replace bad bytes with
    U+FFFD, and `q=caf%C3` would then search for `caf`, a silent fix-up."""
    failures: dict[str, list[str]] = {}
    for pair in query_string.split("&"):
        key, _, value = pair.partition("=")
        raw_key = unquote_to_bytes(key.replace("+", " "))
        name = raw_key.decode("utf-8", "replace")
        try:
            raw_key.decode("utf-8")
            unquote_to_bytes(value.replace("+", " ")).decode("utf-8")
        except UnicodeDecodeError as exc:
            failures.setdefault(name, []).append(
                f"not UTF-8 once percent-decoded (byte {exc.start})"
            )
    return failures


def check_query(request: Request) -> None:
    """Query parameters are UTF-8 and hold no NUL or lone surrogate. Every parameter that
    fails is named, as the failing fields of a body are (`memory.requests.refusals.validation_code`): one
    alone answers its field's own code (`q`: `invalid_query`), several with different codes
    `invalid_request`. They are checked before the endpoint reads any parameter."""
    failures = _encoding_failures(request.META.get("QUERY_STRING", ""))
    for key, values in request.query_params.lists():
        for text in (key, *values):
            problem = text_problem(text)
            if problem is not None:
                failures.setdefault(key, []).append(problem)
    if failures:
        raise exceptions.ValidationError(failures)


class ApiView(APIView):
    """Every API view: JSON only, bodies bounded before anything is read."""

    parser_classes = [StrictJSONParser]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        check_content_length(request)
        super().initial(request, *args, **kwargs)
        check_query(request)


class ContextAPIView(ApiView):
    ctx: Context
    # The capability (memory.scopes) each method needs: reads need `read`, anything else
    # `write`, unless a view says otherwise (recall reads with POST; erasures need `erase`).
    capabilities: dict[str, str] = {}
    # The replica this request reads from (R68, `memory.replicas`); None: the primary.
    replica: ReplicaRead | None = None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        self.ctx = resolve_context(request, kwargs.get("slug", ""))
        capability = self.capability(request.method or "GET")
        self.require(capability, f"{ACTS[capability]} ({request.method} {request.path})")
        # Without replicas this is one test of an empty list: the single-server path.
        if settings.MORPHZ_REPLICAS and self.reads_only(request):
            self.replica = start_read(read_floor(request, self.ctx))

    @classmethod
    def capability(cls, method: str) -> str:
        """What a token needs for `method` on this view."""
        default = READ if method in ("GET", "HEAD", "OPTIONS") else WRITE
        return cls.capabilities.get(method, default)

    def require(self, capability: str, what: str) -> None:
        """403 `scope_insufficient` unless the caller's token has `capability`; people
        (staff with a session) have every capability here (the admin checks theirs)."""
        token = self.request.auth
        if isinstance(token, ApiToken):
            require(token.scope, capability, what)

    def reads_only(self, request: Request) -> bool:
        """Whether this request only reads, so a replica may answer it: GET. A view whose
        POST only reads in some forms (recall) says so here; writes and claims never do."""
        return request.method == "GET"

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        if self.replica is not None:
            self.replica.end()
        return super().finalize_response(request, response, *args, **kwargs)

    def answer_from_primary(self, exc: Exception) -> Response | Exception:
        """A read that failed on its replica (the server went away, replay cancelled the
        query) is answered again by the primary: replica loss is never an error the caller
        sees. Returns the primary's response, or the exception it raised."""
        assert self.replica is not None
        self.replica.failed(exc)
        handler = getattr(self, str(self.request.method).lower())
        try:
            response: Response = handler(self.request, *self.args, **self.kwargs)
        except Exception as again:
            return again
        return response

    def author(self) -> Author:
        return author_of(self.request)

    def handle_exception(self, exc: Exception) -> Response:
        """A refusal of a request whose token came from memory (`api.auth`) answers 401 when
        the token is no longer live: a revoked token learns nothing, and gets what a check
        against the database would have answered. So does a write that found it revoked
        (`memory.errors.TokenNotLive`). When that check itself fails, its database error is
        answered (503 or 500, as any other)."""
        if self.replica is not None and self.replica.active:
            self.replica.end()
            if isinstance(exc, DatabaseError | psycopg.Error):
                outcome = self.answer_from_primary(exc)
                if isinstance(outcome, Response):
                    return outcome
                exc = outcome
        token = self.request.auth if _from_memory(self.request) else None
        stale = isinstance(exc, TokenNotLive)
        unchecked = not isinstance(exc, exceptions.AuthenticationFailed | TokenNotLive)
        if unchecked and isinstance(token, ApiToken):
            try:
                stale = not token_is_live(token.pk, token.context_id)
            except DatabaseError as failure:
                exc = failure
        if stale:
            if isinstance(self.request.auth, ApiToken):
                forget_token(self.request.auth.pk)
            exc = exceptions.AuthenticationFailed(token_refusal(request_bearer(self.request) or ""))
        return super().handle_exception(exc)

    # `self.ctx` may be a context row up to a minute old when the token came from memory
    # (a view's `commit_checks_token`): such a view uses the context's id and slug only.


def _from_memory(request: Request) -> bool:
    # Set by api.auth only once authentication ran, so reading `auth` then runs nothing.
    return bool(getattr(request._request, "token_from_memory", False))


MIN_VERSION_HEADER = "Morphz-Min-Version"


def min_version_of(request: Request) -> int | None:
    """The caller's read-your-writes floor: `min_version` (query or JSON body) or the
    Morphz-Min-Version header; both given must agree. None when neither is."""
    given: dict[str, int | None] = {}
    header = request.headers.get(MIN_VERSION_HEADER)
    if header is not None:
        given["header"] = body(ReadFloorQuery, {"min_version": header}).min_version
    if "min_version" in request.query_params:
        raw = request.query_params.get("min_version")
        given["query"] = body(ReadFloorQuery, {"min_version": raw}).min_version
    elif (
        request.method == "POST"
        and isinstance(request.data, dict)
        and "min_version" in request.data
    ):
        raw = request.data["min_version"]
        given["body"] = body(ReadFloorBody, {"min_version": raw}).min_version
    values = set(given.values())
    if len(values) > 1:
        raise ApiError(
            ErrorCode.INVALID_REQUEST,
            f"the {MIN_VERSION_HEADER} header and min_version differ",
            [{"field": "min_version"}],
        )
    return values.pop() if values else None


def read_floor(request: Request, ctx: Context) -> Floor:
    """What a replica must have replayed to answer this read (`memory.replicas`): the
    caller's `min_version` (never above the context's version: the primary holds no more),
    else the context as the primary showed it when the request began. A request that
    continues a cursor always takes the latter, so its next page is never older."""
    asked = min_version_of(request)
    continues = "cursor" in request.query_params or (
        isinstance(request.data, dict) and request.data.get("cursor")
    )
    if asked is None or continues:
        return Floor(ctx.pk, ctx.version, ctx.last_seq)
    return Floor(ctx.pk, min(asked, ctx.version))


def not_found(what: str) -> ApiError:
    return ApiError(ErrorCode.NOT_FOUND, f"{what} not found")


def resolve_context(request: Request, slug: str) -> Context:
    token = request.auth
    if isinstance(token, ApiToken):
        if token.context.slug != slug:
            raise not_found(f"context {slug!r}")
        # The token was loaded with its context during authentication, in this request.
        return token.context
    context = context_for_person(slug, request.user)
    if context is None:
        raise not_found(f"context {slug!r}")
    return context


def author_of(request: Request) -> Author:
    token = request.auth
    if isinstance(token, ApiToken):
        # People read this in the explorer and the audit trail: the token's name first, its
        # prefix to tell two tokens of the same name apart.
        label = (
            f"{token.name} (token {token.key_prefix})"
            if token.name
            else f"token {token.key_prefix}"
        )
        return Author(label, "agent")
    return Author(f"person:{request.user.get_username()}", "person")


def token_id_of(request: Request) -> int | None:
    """The id of the agent token the request came with (None for a person)."""
    token = request.auth
    return token.pk if isinstance(token, ApiToken) else None


def idempotency_key(request: Request, body_key: str | None, max_chars: int = KEY_MAX) -> Any:
    """The key from the body or the Idempotency-Key header (one key rule for both:
    `memory.idempotency`); both given must agree."""
    header = request.headers.get("Idempotency-Key")
    if header is not None:
        check_text(header, "Idempotency-Key")
        check_key(header, max_chars)
        if body_key is not None and body_key != header:
            raise ApiError(
                ErrorCode.INVALID_REQUEST,
                "Idempotency-Key header and idempotency_key in the body differ",
                [{"field": "idempotency_key"}],
            )
        return header
    return body_key
