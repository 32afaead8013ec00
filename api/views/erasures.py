"""POST/GET erasures/ (R64): erase content from the context and its lineage; list tombstones.

Erasing takes a token of scope `erase` or `admin` (`memory.scopes`); a person needs the
`memory.add_erasure` permission. Listing the tombstones is a read."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, author_of
from api.errors import ApiError
from api.requests import body
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.shapes import ErasureListSerializer, ErasureOutSerializer
from memory.erasure.erase import erase
from memory.erasure.lines import tombstone_json
from memory.errors import ErrorCode
from memory.models import ApiToken, Erasure
from memory.requests.contexts import ErasureIn
from memory.scopes import ERASE, READ


class ErasureView(ContextAPIView):
    capabilities = {"POST": ERASE, "GET": READ}

    @extend_schema(
        tags=["context"],
        operation_id="erasures_list",
        summary="Tombstones of erased content",
        responses=responses({200: ErasureListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        rows = Erasure.objects.filter(context=self.ctx).order_by("pk")[:1000]
        return Response({"erasures": [tombstone_json(t) for t in rows]})

    @extend_schema(
        tags=["context"],
        operation_id="erasures_create",
        summary="Erase content from all history (R64)",
        description="Masks whole events, frames (every revision), spans and patterns wherever "
        "they are stored or served: events, transactions, frames, revisions, evaluations, "
        "search, exports, diffs, as-of reads, and every context of the fork lineage. Sizes, "
        "ids, versions and relations stay; a tombstone per item says when, by whom and why. "
        "Takes a token of scope `erase` or `admin` (403 `scope_insufficient` otherwise).",
        request=ErasureIn,
        responses=responses({201: ErasureOutSerializer}, *WRITE_ERRORS, 422),
    )
    def post(self, request: Request, slug: str) -> Response:
        person = not isinstance(request.auth, ApiToken)
        if person and not request.user.has_perm("memory.add_erasure"):
            raise ApiError(
                ErrorCode.PERMISSION_DENIED, "erasing takes the memory.add_erasure permission"
            )
        asked = body(ErasureIn, request.data)
        result = erase(
            self.ctx.pk,
            refs=asked.refs,
            spans=[span.model_dump() for span in asked.spans],
            patterns=asked.patterns,
            reason=asked.reason,
            erased_by=author_of(request).label,
        )
        return Response(result.as_dict(), status=201)
