"""Response shapes (docs/rest.md): the serializers that document them in the OpenAPI schema
and the `present_*` builders of the shapes only the API answers. Contexts, events, frame
revisions and transactions are built by memory.shapes (the explorer, recall, search and
compile share those builders); the schema test checks live responses against these
serializers.
"""

from __future__ import annotations

from rest_framework import serializers

from memory.errors import ErrorCode
from memory.kinds import EVENT_STATUSES
from memory.models import FrameRevision
from memory.read.paging import NEXT_CURSOR_HELP
from memory.shapes import RevisionJson, revision_json

# The schema's enum of error codes (`ErrorCodeEnum`, named in settings), read from ErrorCode.
ERROR_CODES = [code.value for code in ErrorCode]


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.ChoiceField(
        choices=ERROR_CODES,
        help_text="stable machine-readable code, e.g. `conflict`",
    )
    message = serializers.CharField(help_text="what went wrong and what to do, for a model")
    details = serializers.ListField(
        child=serializers.JSONField(),
        help_text="structured details: failing operations with `index`, parse `line`/`column`, "
        "changed items of a conflict, invalid `field`s",
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorBodySerializer()


class PageSerializer(serializers.Serializer):
    """A cursor-paged list: the items under their plural name (in the subclass) and the cursor."""

    next_cursor = serializers.CharField(allow_null=True, help_text=NEXT_CURSOR_HELP)


# -- context -------------------------------------------------------------------------------


class PressureSerializer(serializers.Serializer):
    used_tokens = serializers.IntegerField()
    capacity_tokens = serializers.IntegerField()
    level = serializers.ChoiceField(choices=("ok", "pressure", "maintenance"))
    percent = serializers.FloatField()


class ContextSettingsSerializer(serializers.Serializer):
    grace_ticks = serializers.IntegerField()
    capacity_tokens = serializers.IntegerField()
    pressure_percent = serializers.IntegerField()
    maintenance_percent = serializers.IntegerField()
    maintenance_exit_percent = serializers.IntegerField()
    observation_budget_tokens = serializers.IntegerField()


class ContextSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    version = serializers.IntegerField()
    tick = serializers.IntegerField()
    last_seq = serializers.IntegerField()
    settings = ContextSettingsSerializer()
    pressure = PressureSerializer()
    frozen = serializers.BooleanField(help_text="writes are refused with 409 `context_frozen`")
    forked_from = serializers.JSONField(
        allow_null=True, help_text="`{slug, version, tick}` of the fork's source, else null"
    )
    screening = serializers.CharField(
        help_text="how written text is screened for secrets and card numbers: off, refuse, mask"
    )
    history_verified = serializers.BooleanField(
        help_text="false when the context was imported from an export whose signature did "
        "not verify (by an admin, explicitly): its history is not proven to be the server's"
    )
    erasures = serializers.IntegerField(help_text="tombstones of erased content (GET erasures/)")


class ContextListSerializer(serializers.Serializer):
    contexts = ContextSerializer(many=True)


class ApiIndexSerializer(serializers.Serializer):
    version = serializers.CharField()
    schema = serializers.CharField()
    docs = serializers.CharField()
    contexts = serializers.ListField(child=serializers.CharField())


# -- events --------------------------------------------------------------------------------


class EventSerializer(serializers.Serializer):
    ref = serializers.CharField(help_text='"@e<seq>"')
    seq = serializers.IntegerField()
    kind = serializers.CharField()
    thread = serializers.CharField()
    created_at = serializers.DateTimeField()
    size = serializers.IntegerField(help_text="length of the text in characters")
    tokens = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=EVENT_STATUSES, help_text="`active` or `retired` for observations, else `recorded`"
    )
    pending = serializers.BooleanField(help_text="waiting for an evaluation to claim it")
    request = serializers.CharField(
        allow_null=True, help_text="`open` or `delivered` for user requests and actions"
    )
    delivers = serializers.ListField(child=serializers.CharField())
    delivered_by = serializers.CharField(allow_null=True)
    payload = serializers.JSONField(allow_null=True)
    preview = serializers.CharField(help_text="the first 200 characters of the text")
    created = serializers.BooleanField(
        required=False, help_text="on append: false when an idempotent retry found the event"
    )


class BulkEventSerializer(serializers.Serializer):
    ref = serializers.CharField(help_text='"@e<seq>"')
    seq = serializers.IntegerField()
    kind = serializers.CharField()
    thread = serializers.CharField()
    size = serializers.IntegerField()
    tokens = serializers.IntegerField()
    status = serializers.ChoiceField(choices=EVENT_STATUSES)
    request = serializers.CharField(allow_null=True)
    created = serializers.BooleanField(
        help_text="false when the item's idempotency_key found an earlier event"
    )


class BulkEventListSerializer(serializers.Serializer):
    events = BulkEventSerializer(many=True, help_text="one per item, in the order sent")


class EventListSerializer(PageSerializer):
    events = EventSerializer(many=True)


class EventChunkSerializer(serializers.Serializer):
    ref = serializers.CharField()
    seq = serializers.IntegerField()
    kind = serializers.CharField()
    thread = serializers.CharField()
    status = serializers.ChoiceField(choices=EVENT_STATUSES)
    size = serializers.IntegerField()
    offset = serializers.IntegerField()
    length = serializers.IntegerField()
    content = serializers.CharField()
    next_offset = serializers.IntegerField(allow_null=True)
    erased = serializers.ListField(
        child=serializers.JSONField(),
        required=False,
        help_text="when the event or a span of it was erased: its tombstones (when, by whom, "
        "why; the text is masked)",
    )


# -- frames --------------------------------------------------------------------------------


class RetireSerializer(serializers.Serializer):
    requested_tick = serializers.IntegerField()
    due_tick = serializers.IntegerField()
    ticks_left = serializers.IntegerField()
    reason = serializers.CharField(allow_blank=True)


class FrameSerializer(serializers.Serializer):
    id = serializers.CharField()
    revision = serializers.IntegerField()
    status = serializers.ChoiceField(choices=("active", "retiring", "retired"))
    protected = serializers.BooleanField()
    body = serializers.JSONField(help_text="ordered map written by the model")
    sources = serializers.ListField(child=serializers.CharField())
    retire = RetireSerializer(allow_null=True, help_text="set while retiring")
    tokens = serializers.IntegerField()
    created_version = serializers.IntegerField()
    changed_version = serializers.IntegerField()


class FrameListSerializer(PageSerializer):
    frames = FrameSerializer(many=True)


class RevisionSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    body = serializers.JSONField(
        allow_null=True, help_text="null when `body_omitted` (read the revision on its own)"
    )
    body_omitted = serializers.BooleanField(
        help_text="the body is longer than the page allows; GET frames/{id}/revisions/{n}/"
    )
    body_chars = serializers.IntegerField(required=False, help_text="size of the body as JSON")
    sources = serializers.ListField(child=serializers.CharField())
    version = serializers.IntegerField(help_text="committed version that wrote it")
    transaction = serializers.IntegerField()
    created_at = serializers.DateTimeField()


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


class HistoryPageSerializer(serializers.Serializer):
    next_before = serializers.IntegerField(
        allow_null=True, help_text="pass as `history_before` for older revisions; null at the first"
    )
    limit = serializers.IntegerField()


class FrameDetailSerializer(FrameSerializer):
    body_text = serializers.CharField(
        help_text="the body as canonical S-expression fields, one per line (what `revise` takes)"
    )
    revisions = RevisionSerializer(many=True)
    write_history = serializers.ListField(
        child=serializers.JSONField(),
        help_text="the transactions that wrote the frame (R32): text (cut at 16,384 "
        "characters, `text_truncated`), base and committed version",
    )
    history = HistoryPageSerializer()


# -- relations -----------------------------------------------------------------------------


class RelationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    subject = serializers.CharField()
    name = serializers.CharField()
    object = serializers.CharField()
    live = serializers.BooleanField()
    created_version = serializers.IntegerField()
    removed_version = serializers.IntegerField(allow_null=True)


class RelationListSerializer(PageSerializer):
    relations = RelationSerializer(many=True)


# -- transactions --------------------------------------------------------------------------


class PendingReleaseSerializer(serializers.Serializer):
    frame = serializers.CharField()
    tokens = serializers.IntegerField()
    due_tick = serializers.IntegerField()


class ReceiptSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    tick = serializers.IntegerField()
    results = serializers.ListField(child=serializers.JSONField(), help_text="one per operation")
    released_tokens = serializers.IntegerField()
    pending_release = PendingReleaseSerializer(many=True)
    completed_by_successor = serializers.ListField(child=serializers.CharField())
    pressure = PressureSerializer()
    transaction = serializers.IntegerField(help_text="id of the stored transaction")
    ref = serializers.CharField(help_text="the transaction event in the history")


class TransactionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField(help_text="`committed` or `rejected`")
    author = serializers.CharField()
    author_kind = serializers.CharField()
    thread = serializers.CharField()
    base_version = serializers.IntegerField(allow_null=True)
    committed_version = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    text = serializers.CharField(help_text="cut at 16,384 characters in lists")
    text_truncated = serializers.BooleanField(
        help_text="the text was cut: read the transaction's event (`ref`) in chunks"
    )
    ops = serializers.JSONField(allow_null=True)
    ops_omitted = serializers.BooleanField(help_text="ops longer than 16,384 characters left out")
    receipt = serializers.JSONField(allow_null=True)
    # Declared fields leave the class namespace (DRF metaclass); the names only look shadowed.
    errors = serializers.JSONField(allow_null=True)  # type: ignore[assignment]
    frames = serializers.ListField(child=serializers.CharField())
    evaluation = serializers.IntegerField(allow_null=True)
    ref = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class TransactionListSerializer(PageSerializer):
    transactions = TransactionSerializer(many=True)


# -- evaluations, recall, search -----------------------------------------------------------


class EvaluationHeadSerializer(serializers.Serializer):
    """What an evaluation's answer and its later summary share."""

    id = serializers.IntegerField()
    tick = serializers.IntegerField()
    advanced_tick = serializers.BooleanField()
    view_version = serializers.IntegerField(help_text="the version the compiled input showed")
    thread = serializers.CharField()
    continuation = serializers.BooleanField()
    claimed = serializers.ListField(child=serializers.CharField(), help_text="refs claimed")
    expired = serializers.ListField(
        child=serializers.CharField(), help_text="frames whose retirement this call applied"
    )


class EvaluationSerializer(EvaluationHeadSerializer):
    context = serializers.JSONField(  # type: ignore[assignment]
        allow_null=True,
        help_text="the active context, structured; null when `context_omitted`",
    )
    context_omitted = serializers.BooleanField(
        help_text="true when the whole answer was over the response limit: `context` is null "
        "(`text` renders the same)",
    )
    text = serializers.CharField(
        allow_null=True,
        help_text="the active context rendered for a prompt; null when `text_omitted`",
    )
    text_omitted = serializers.BooleanField(
        help_text="true when even `text` alone was over the response limit: the evaluation "
        "was written (inputs claimed) but its text is not sent; slim the memory (retire or "
        "digest frames) and evaluate again",
    )
    answer_bytes = serializers.IntegerField(
        required=False, help_text="when anything is omitted: the size the whole answer had"
    )
    limit_bytes = serializers.IntegerField(
        required=False, help_text="when anything is omitted: the response limit"
    )
    text_chars = serializers.IntegerField(
        required=False, help_text="when `text_omitted`: the length of the text left out"
    )
    tokens = serializers.JSONField()
    instructions = serializers.CharField(
        required=False, help_text="the model protocol's instructions, when asked for"
    )


class RecallSerializer(serializers.Serializer):
    nodes = serializers.ListField(
        child=serializers.JSONField(), help_text='{"type": "frame" | "event", "id" or "ref", ...}'
    )
    edges = serializers.ListField(
        child=serializers.JSONField(),
        help_text='{"from", "to", "kind": "source" | "relation", "name"}',
    )
    next_cursor = serializers.CharField(allow_null=True)
    version = serializers.IntegerField()
    observation = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text="`{ref, seq}` of the recall_result observation, when `as_observation`",
    )
    page = serializers.JSONField(required=False)


class SearchResultSerializer(serializers.Serializer):
    hits = serializers.ListField(
        child=serializers.JSONField(),
        help_text="best first: `{type, id | ref, status, kind, thread, score, snippet, next}`",
    )
    lag = serializers.JSONField(
        help_text="how far the index is behind the facts: `{pending_intents, "
        "oldest_pending_seconds, indexer: {state, restarts, last_exit}}`"
    )
    total = serializers.IntegerField(
        help_text="documents matching, counted up to 1000 (`total_exact` false beyond)"
    )
    total_exact = serializers.BooleanField()
    next_offset = serializers.IntegerField(
        allow_null=True, help_text="`offset` of the next page, null on the last"
    )
    query = serializers.JSONField(
        required=False,
        help_text="`{q, tokens, ignored}`: the query as sent, the words searched for (function "
        "words dropped, at most 32) and the words of a longer question past those, ignored",
    )
