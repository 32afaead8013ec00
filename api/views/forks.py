"""forks/: fork the context at a version (R54)."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.auth import request_bearer
from api.base import ContextAPIView, idempotency_key
from api.requests import body
from api.schema import WRITE_ERRORS, responses
from api.shapes import ForkSerializer
from api.views.common import IDEMPOTENCY_HEADER
from memory.models import ApiToken, Context
from memory.requests.contexts import ForkIn
from memory.scopes import ADMIN
from memory.versions.forks import fork_context


class ForkView(ContextAPIView):
    @extend_schema(
        tags=["context"],
        operation_id="context_fork",
        summary="Fork the context at a version",
        description="Creates an independent context whose history and state equal this one's "
        "at the end of `at_version` (default: now): events, frames with revisions, relations, "
        "transaction records, retirement windows, counters, settings and the search index. "
        "Answers its slug, a new token for it and `forked_from`. This context is untouched. "
        "Works on frozen contexts too. With `idempotency_key` (or the Idempotency-Key header) "
        "a retry whose first answer was lost gets the same fork and the same token; the key "
        "with other arguments or from another caller is 409 `idempotency_key_reused`. A retry "
        "is answered 200, a new fork 201.",
        request=ForkIn,
        parameters=[IDEMPOTENCY_HEADER],
        responses=responses({201: ForkSerializer, 200: ForkSerializer}, *WRITE_ERRORS, 409),
    )
    def post(self, request: Request, slug: str) -> Response:
        asked = body(ForkIn, request.data)
        if Context.objects.filter(forked_from_id=self.ctx.pk).count() >= settings.MORPHZ_FORK_LIMIT:
            self.require(ADMIN, f"fork beyond the limit of {settings.MORPHZ_FORK_LIMIT} forks")
        key = idempotency_key(request, asked.idempotency_key)
        result = fork_context(
            self.ctx.pk,
            slug=asked.slug,
            at_version=asked.at_version,
            name=asked.name,
            idempotency_key=key,
            caller_secret=caller_secret(request) if key is not None else None,
        )
        return Response(result.as_dict(), status=200 if result.replayed else 201)


def caller_secret(request: Request) -> bytes:
    """What seals a fork's token for a retry under its idempotency key (memory.versions.
    forks): the caller's raw bearer token, which the server never stores; for a signed-in
    person, the server's secret key and their id."""
    raw = request_bearer(request)
    if isinstance(request.auth, ApiToken) and raw is not None:
        return raw.encode()
    return f"{settings.SECRET_KEY}:person:{request.user.pk}".encode()
