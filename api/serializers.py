"""Request validation for every endpoint (bodies and query strings).

Strict on purpose: unknown fields are refused (a typo in an agent's request should fail
loudly, not be ignored), strings must be strings, numbers are bounded to what the database
stores. The response shapes live in `api.shapes`.
"""

from __future__ import annotations

import threading
from typing import Any

from rest_framework import serializers

from api.errors import ApiError
from api.fields import (
    ContentField,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
    as_of_field,
    cursor_field,
    evaluation_field,
    idempotency_field,
    limit_field,
    min_version_field,
    source_field,
    thread_field,
)
from memory.errors import ErrorCode
from memory.kinds import APPENDABLE_KINDS, EVENT_KINDS, FRAME_STATUSES, TRANSACTION_STATUSES
from memory.limits import (
    CHUNK_DEFAULT,
    CHUNK_MAX,
    MAX_BULK_EVENTS,
    MAX_CONTENT_CHARS,
    MAX_DELIVERS,
    RECALL_DEFAULT_DEPTH,
    RECALL_DEFAULT_NODES,
    RECALL_MAX_DEPTH,
    RECALL_MAX_NODES,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
    SEARCH_MAX_QUERY_CHARS,
)
from memory.read.lists import EVENT_STATUS_FILTERS
from memory.read.pages import HISTORY_PAGE, MAX_HISTORY_PAGE
from memory.read.paging import EVENTS, FRAMES, RELATIONS, TRANSACTIONS
from memory.vocabulary import FRAME_ID_MAX, MAX_SEQ, RELATION_NAME_MAX

# -- bodies ---------------------------------------------------------------------------------


class EventAppendIn(StrictSerializer):
    kind = serializers.ChoiceField(choices=APPENDABLE_KINDS)
    content = ContentField(allow_blank=True, trim_whitespace=False, max_length=MAX_CONTENT_CHARS)
    payload = serializers.JSONField(required=False, allow_null=True)
    thread = thread_field()
    delivers = serializers.ListField(
        child=StrictCharField(max_length=40),
        required=False,
        max_length=MAX_DELIVERS,
        help_text='refs of the requests or actions this event answers, e.g. ["@e17"]',
    )
    idempotency_key = idempotency_field()


class EventBulkAppendIn(StrictSerializer):
    events = EventAppendIn(  # type: ignore[call-arg]  # many=True makes a ListSerializer
        many=True,
        allow_empty=False,
        max_length=MAX_BULK_EVENTS,
        help_text=f"1-{MAX_BULK_EVENTS} events, appended atomically and in order (R50)",
    )


class EvaluationIn(StrictSerializer):
    thread = thread_field()
    idempotency_key = idempotency_field()
    continuation = StrictBooleanField(
        required=False,
        default=False,
        help_text="a model continuation: claims nothing and never advances the tick",
    )
    include_instructions = StrictBooleanField(
        required=False,
        default=False,
        help_text="put the model protocol's instructions ahead of the compiled text",
    )


class TransactionIn(StrictSerializer):
    """Either `text` (the S-expression) or the JSON form (`base_version`, `reason`, `ops`)."""

    text = ContentField(
        required=False,
        trim_whitespace=False,
        max_length=MAX_CONTENT_CHARS,
        help_text='the text form: "(context-tx (base-version 3) ...)"',
    )
    base_version = StrictIntegerField(
        required=False, allow_null=True, min_value=0, max_value=MAX_SEQ
    )
    reason = StrictCharField(required=False, allow_null=True, allow_blank=True)
    ops = serializers.ListField(
        child=serializers.JSONField(),
        required=False,
        help_text="operations of the JSON form, e.g. "
        '{"op": "derive", "id": "x", "from": ["@e1"], "body": {...}}',
    )
    thread = thread_field()
    evaluation = evaluation_field("the evaluation whose view the transaction was written from")
    idempotency_key = idempotency_field()


class FrameBodyIn(StrictSerializer):
    """A new body for one frame, written as S-expression fields or as a JSON object."""

    text = ContentField(
        trim_whitespace=False,
        allow_blank=True,
        help_text='the body alone: "(goal ship-v2) (stage paused)" or \'{"goal": "ship-v2"}\'',
    )
    form = serializers.ChoiceField(choices=["fields", "json"], help_text="how `text` is written")
    base_version = StrictIntegerField(
        required=False, allow_null=True, min_value=0, max_value=MAX_SEQ
    )
    reason = StrictCharField(required=False, allow_null=True, allow_blank=True)


class RecallIn(StrictSerializer):
    frame_id = StrictCharField(max_length=FRAME_ID_MAX)
    depth = StrictIntegerField(
        required=False, default=RECALL_DEFAULT_DEPTH, min_value=1, max_value=RECALL_MAX_DEPTH
    )
    direction = serializers.ChoiceField(
        choices=("ancestors", "descendants", "both"), required=False, default="ancestors"
    )
    include_bodies = StrictBooleanField(required=False, default=True)
    include_events = StrictBooleanField(required=False, default=False)
    max_nodes = StrictIntegerField(
        required=False, default=RECALL_DEFAULT_NODES, min_value=1, max_value=RECALL_MAX_NODES
    )
    cursor = StrictCharField(required=False, allow_null=True, max_length=2000)
    view_version = StrictIntegerField(
        required=False, allow_null=True, min_value=0, max_value=MAX_SEQ
    )
    evaluation = StrictIntegerField(required=False, allow_null=True, min_value=1, max_value=MAX_SEQ)
    as_observation = StrictBooleanField(
        required=False,
        default=False,
        help_text="append the result as a recall_result observation (R30)",
    )
    thread = thread_field()
    as_of = as_of_field()
    min_version = min_version_field()


class ActionIn(StrictSerializer):
    name = StrictCharField(max_length=200)
    arguments = serializers.JSONField(required=False, allow_null=True)
    thread = thread_field()
    idempotency_key = idempotency_field()


# -- query strings --------------------------------------------------------------------------


class ReadFloorQuery(StrictSerializer):
    """The read-your-writes floor alone, read before the endpoint's own parameters."""

    min_version = min_version_field()


class EventListQuery(StrictSerializer):
    kind = serializers.ChoiceField(choices=EVENT_KINDS, required=False)
    thread = thread_field(filter=True)
    status = serializers.ChoiceField(choices=EVENT_STATUS_FILTERS, required=False)
    after = StrictIntegerField(
        required=False, min_value=0, max_value=MAX_SEQ, help_text="only events with seq > after"
    )
    cursor = cursor_field()
    limit = limit_field(EVENTS.limit, EVENTS.max_limit)
    min_version = min_version_field()


class EventChunkQuery(StrictSerializer):
    offset = StrictIntegerField(required=False, default=0, min_value=0, max_value=MAX_SEQ)
    length = StrictIntegerField(
        required=False, default=CHUNK_DEFAULT, min_value=1, max_value=CHUNK_MAX
    )
    min_version = min_version_field()


class FrameListQuery(StrictSerializer):
    status = serializers.ChoiceField(choices=FRAME_STATUSES, required=False)
    # The metaclass takes declared fields off the class: Field.source is left alone.
    source = source_field()  # type: ignore[assignment]
    cursor = cursor_field()
    limit = limit_field(FRAMES.limit, FRAMES.max_limit)
    as_of = as_of_field()
    min_version = min_version_field()


class FrameDetailQuery(StrictSerializer):
    as_of = as_of_field()
    history_before = StrictIntegerField(
        required=False,
        min_value=1,
        max_value=MAX_SEQ,
        help_text="only revisions older than this one (`history.next_before` of the last page)",
    )
    history_limit = StrictIntegerField(
        required=False,
        default=HISTORY_PAGE,
        min_value=1,
        max_value=MAX_HISTORY_PAGE,
        help_text="revisions per page, newest first",
    )
    min_version = min_version_field()


class RelationListQuery(StrictSerializer):
    subject = StrictCharField(required=False, max_length=FRAME_ID_MAX)
    object = StrictCharField(required=False, max_length=FRAME_ID_MAX)
    name = StrictCharField(required=False, max_length=RELATION_NAME_MAX)
    include_removed = StrictBooleanField(required=False, default=False)
    cursor = cursor_field()
    limit = limit_field(RELATIONS.limit, RELATIONS.max_limit)
    as_of = as_of_field()
    min_version = min_version_field()


class TransactionListQuery(StrictSerializer):
    frame = StrictCharField(required=False, max_length=FRAME_ID_MAX)
    status = serializers.ChoiceField(choices=TRANSACTION_STATUSES, required=False)
    after = StrictIntegerField(
        required=False,
        min_value=0,
        max_value=MAX_SEQ,
        help_text="only transactions with id > after",
    )
    cursor = cursor_field()
    limit = limit_field(TRANSACTIONS.limit, TRANSACTIONS.max_limit)
    min_version = min_version_field()


class SearchQuery(StrictSerializer):
    q = StrictCharField(max_length=SEARCH_MAX_QUERY_CHARS)
    type = serializers.ChoiceField(choices=("frame", "event"), required=False)
    status = StrictCharField(required=False, max_length=20)
    kind = serializers.ChoiceField(
        choices=(*EVENT_KINDS, "frame"), required=False, help_text="an event kind, or frame"
    )
    thread = thread_field(filter=True)
    # Read by memory.search.query, which holds the rule (an offset is required): a
    # DateTimeField here would read a date alone or a local time as UTC.
    since = StrictCharField(
        required=False, max_length=40, help_text="ISO 8601 with offset: 2025-01-31T12:00:00Z"
    )
    until = StrictCharField(
        required=False, max_length=40, help_text="exclusive; ISO 8601 with offset"
    )
    transactions = StrictBooleanField(
        required=False,
        default=None,  # absent: left out unless kind=transaction; `transactions=` is 400
        help_text="include transaction events (left out by default: they echo the frames)",
    )
    limit = limit_field(SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT)
    offset = StrictIntegerField(
        required=False,
        default=0,
        min_value=0,
        max_value=999,
        help_text="skip this many ranked hits (next page: the result's `next_offset`)",
    )
    min_version = min_version_field()


def query_data(serializer_class: type[serializers.Serializer], params: Any) -> dict[str, Any]:
    """Validated query parameters (a QueryDict); a parameter given twice is refused
    (`invalid_request`): which of the two values was meant cannot be known."""
    repeated = sorted(key for key in params if len(params.getlist(key)) > 1)
    if repeated:
        raise ApiError(
            ErrorCode.INVALID_REQUEST,
            f"query parameter {repeated[0]!r} is given more than once; send it once",
            [{"field": key, "reason": "repeated"} for key in repeated],
        )
    return validated(serializer_class, {key: params.get(key) for key in params}, "query")


def body_data(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    """A validated JSON body."""
    return validated(serializer_class, data, "body")


_reusable = threading.local()


def validated(
    serializer_class: type[serializers.Serializer], data: Any, source: str = "body"
) -> dict[str, Any]:
    """`data` validated by `serializer_class`, or its ValidationError; `source` ("query" or
    "body") tells the strict fields which forms a value may take.

    A serializer deep-copies its declared fields when it is built, which cost more than the
    validation itself on every request; one instance per class and thread is reused instead,
    with its per-call state (input, result, errors) reset each time."""
    cache: dict[type, serializers.Serializer] = _reusable.__dict__.setdefault("by_class", {})
    serializer = cache.get(serializer_class)
    if serializer is None:
        serializer = cache[serializer_class] = serializer_class(data=data)
    else:
        for attr in ("_validated_data", "_errors", "_data"):
            serializer.__dict__.pop(attr, None)
        serializer.initial_data = data
    serializer._context = {"source": source}
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class ToolCallIn(StrictSerializer):
    id = StrictCharField(required=False, allow_null=True, max_length=200)
    name = StrictCharField(max_length=200)
    arguments = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text="an object, or its JSON text (as OpenAI sends it)",
    )


class ReplyIn(StrictSerializer):
    """A model reply, provider-neutral: text, tool calls, requests it delivers."""

    text = StrictCharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=1_000_000,
        help_text="reply text; may hold a (context-tx ...) form, bare or fenced, and "
        "(delivers @e17)",
    )
    tool_calls = ToolCallIn(many=True, required=False)
    delivers = serializers.ListField(
        child=StrictCharField(max_length=40), required=False, max_length=100
    )
    thread = thread_field()
    evaluation = evaluation_field("the evaluation the reply answers")
    tools = serializers.ListField(
        child=StrictCharField(min_length=1, max_length=200, trim_whitespace=False),
        required=False,
        allow_null=True,
        max_length=128,
        help_text="the agent's own tool names: a call to any other name (not a memory tool) "
        "is refused `unknown_tool` instead of registered",
    )
    on_rejection = serializers.ChoiceField(
        choices=["withhold", "proceed"],
        required=False,
        help_text="`withhold` (default): a rejected transaction withholds the reply's actions "
        "and message; `proceed`: they are written all the same",
    )
    idempotency_key = StrictCharField(
        required=False,
        allow_null=True,
        min_length=1,
        max_length=180,
        trim_whitespace=False,
        help_text="a retry with the same key writes no part of the reply twice (the "
        "Idempotency-Key header works too)",
    )


class ActionCancelIn(StrictSerializer):
    """Cancelling a pending action (R59): why, for the model to read."""

    reason = StrictCharField(
        required=False,
        allow_null=True,
        max_length=1000,
        trim_whitespace=False,
        help_text="why the action is cancelled; the model reads it in the cancellation",
    )
