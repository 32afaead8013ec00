"""Response shapes (docs/rest.md) in the OpenAPI schema. Each serializer here is derived
from the TypedDict of memory.shapes that declares the shape and its builder (api.shape_schema
turns its fields into the component's), so a field is named and described once; the schema
test checks live responses against these serializers.
"""

from __future__ import annotations

from typing import Any, ClassVar

from api.shape_schema import ShapeSerializer
from memory import shapes
from memory.errors import ErrorCode
from memory.models import FrameRevision
from memory.shapes import RevisionJson, erasures, revision_json, versions
from memory.shapes import pages as lists
from memory.shapes.actions import Cancellation
from memory.shapes.errors import ErrorBody, ErrorJson
from memory.shapes.evaluation import EvaluationHead, EvaluationJson
from memory.shapes.health import Health
from memory.shapes.recall import RecallJson, SearchJson

# The schema's enum of error codes (`ErrorCodeEnum`, named in settings), read from ErrorCode.
ERROR_CODES = [code.value for code in ErrorCode]


class ErrorBodySerializer(ShapeSerializer):
    shape = ErrorJson


class ErrorSerializer(ShapeSerializer):
    shape = ErrorBody


class PageSerializer(ShapeSerializer):
    """A cursor-paged list: the items under their plural name (in the subclass) and the cursor."""

    shape: ClassVar[Any] = lists.Page


# Declared in dependency order: a shape nested in a later one is already named here.


class PressureSerializer(ShapeSerializer):
    shape = shapes.PressureJson


class ContextSettingsSerializer(ShapeSerializer):
    shape = shapes.ContextSettings


class ContextSerializer(ShapeSerializer):
    shape = shapes.ContextJson


class ContextListSerializer(ShapeSerializer):
    shape = lists.ContextList


class ApiIndexSerializer(ShapeSerializer):
    shape = lists.ApiIndex


class HealthSerializer(ShapeSerializer):
    shape = Health


class EventSerializer(ShapeSerializer):
    shape = shapes.EventJson


class BulkEventSerializer(ShapeSerializer):
    shape = shapes.AppendedEvent


class BulkEventListSerializer(ShapeSerializer):
    shape = lists.BulkEventList


class EventListSerializer(PageSerializer):
    shape = lists.EventList


class EventChunkSerializer(ShapeSerializer):
    shape = shapes.EventChunk


class RetireSerializer(ShapeSerializer):
    shape = shapes.WindowView


class FrameSerializer(ShapeSerializer):
    shape = shapes.FrameJson


class FrameListSerializer(PageSerializer):
    shape = lists.FrameList


class RevisionSerializer(ShapeSerializer):
    shape = shapes.RevisionJson


def present_revision(revision: FrameRevision) -> RevisionJson:
    """A stored revision in the revision shape (memory.shapes.revision_json)."""
    return revision_json(
        revision.revision,
        revision.body,
        revision.sources,
        revision.version,
        revision.transaction_id,
        revision.created_at,
    )


class HistoryPageSerializer(ShapeSerializer):
    shape = lists.HistoryPage


class FrameDetailSerializer(ShapeSerializer):
    shape = lists.FrameDetail


class RelationSerializer(ShapeSerializer):
    shape = shapes.RelationJson


class RelationListSerializer(PageSerializer):
    shape = lists.RelationList


class PendingReleaseSerializer(ShapeSerializer):
    shape = shapes.PendingRelease


class ReceiptSerializer(ShapeSerializer):
    shape = shapes.ServedReceipt


class TransactionSerializer(ShapeSerializer):
    shape = shapes.TransactionJson


class TransactionListSerializer(PageSerializer):
    shape = lists.TransactionList


class EvaluationHeadSerializer(ShapeSerializer):
    """What an evaluation's answer and its later summary share."""

    shape: ClassVar[Any] = EvaluationHead


class EvaluationSerializer(EvaluationHeadSerializer):
    shape = EvaluationJson


class RecallSerializer(ShapeSerializer):
    shape = RecallJson


class SearchResultSerializer(ShapeSerializer):
    shape = SearchJson


class EvaluationSummarySerializer(EvaluationHeadSerializer):
    shape: ClassVar[Any] = versions.EvaluationSummary


class EvaluationListSerializer(PageSerializer):
    shape = lists.EvaluationList


class EvaluationDetailSerializer(EvaluationSummarySerializer):
    shape = versions.EvaluationDetail


class DiffSerializer(ShapeSerializer):
    shape = versions.DiffJson


class ForkedFromSerializer(ShapeSerializer):
    shape = versions.ForkSource


class ForkSerializer(ShapeSerializer):
    shape = versions.ForkJson


class TombstoneSerializer(ShapeSerializer):
    shape = erasures.TombstoneJson


class ErasureOutSerializer(ShapeSerializer):
    shape = erasures.ErasureJson


class ErasureListSerializer(ShapeSerializer):
    shape = erasures.ErasureList


class CancellationSerializer(ShapeSerializer):
    shape = Cancellation
