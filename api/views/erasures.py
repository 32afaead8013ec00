"""POST/GET erasures/ (R64): erase content from the context and its lineage; list tombstones.

Erasing takes a token of scope `erase` or `admin` (`memory.scopes`); a person needs the
`memory.add_erasure` permission. Listing the tombstones is a read."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, author_of
from api.errors import ApiError
from api.fields import StrictCharField, StrictIntegerField, StrictSerializer
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.serializers import body_data
from api.shapes import ErasureListSerializer, ErasureOutSerializer
from memory.erasure.erase import MAX_ITEMS, MAX_PATTERN, MAX_REASON, erase
from memory.erasure.lines import tombstone_json
from memory.errors import ErrorCode
from memory.models import ApiToken, Erasure
from memory.scopes import ERASE, READ
from memory.vocabulary import MAX_SEQ


class SpanIn(StrictSerializer):
    ref = StrictCharField(max_length=40, help_text="the event, like @e12")
    start = StrictIntegerField(min_value=0, max_value=MAX_SEQ, help_text="first character")
    end = StrictIntegerField(min_value=1, max_value=MAX_SEQ, help_text="character after the span")


class ErasureIn(StrictSerializer):
    refs = serializers.ListField(
        child=StrictCharField(max_length=200),
        required=False,
        max_length=MAX_ITEMS,
        help_text='whole events and frames: ["@e12", "card-number", ...]',
    )
    spans = SpanIn(  # type: ignore[call-arg]  # many=True makes a ListSerializer
        many=True, required=False, max_length=MAX_ITEMS, help_text="parts of events' text"
    )
    patterns = serializers.ListField(
        child=StrictCharField(max_length=MAX_PATTERN, trim_whitespace=False),
        required=False,
        max_length=MAX_ITEMS,
        help_text="texts erased wherever they occur (card numbers however they are spaced)",
    )
    reason = StrictCharField(max_length=MAX_REASON, trim_whitespace=False, help_text="why")


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
        data = body_data(ErasureIn, request.data)
        result = erase(
            self.ctx.pk,
            refs=data.get("refs") or [],
            spans=[dict(s) for s in data.get("spans") or []],
            patterns=data.get("patterns") or [],
            reason=data["reason"],
            erased_by=author_of(request).label,
        )
        return Response(result.as_dict(), status=201)
