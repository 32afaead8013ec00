"""The search index: the outbox of what to index and the indexed documents."""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q

from memory.models.cognitive import Frame
from memory.models.contexts import Context
from memory.models.timeline import Event


class IndexIntent(models.Model):
    """Outbox row: this frame or event must be (re)indexed for search (R34)."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    frame = models.ForeignKey(Frame, null=True, blank=True, on_delete=models.CASCADE)
    event = models.ForeignKey(Event, null=True, blank=True, on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(frame__isnull=True) ^ Q(event__isnull=True),
                name="index_intent_one_target",
            ),
        ]


class SearchDocument(models.Model):
    """Derived search index entry for one frame or event; rebuildable from the facts.

    No copy of the text: snippets are cut from the facts for the few hits a search returns
    (storing it doubled what indexing wrote). No separate index on `context`: the
    (context, created_at) index serves it, and a plain context index tempted the planner
    into filtering a whole context instead of using the GIN index."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+", db_index=False)
    frame = models.OneToOneField(
        Frame, null=True, blank=True, on_delete=models.CASCADE, related_name="search_document"
    )
    event = models.OneToOneField(
        Event, null=True, blank=True, on_delete=models.CASCADE, related_name="search_document"
    )
    ref = models.CharField(max_length=140)
    status = models.CharField(max_length=10)
    kind = models.CharField(max_length=20)
    thread = models.CharField(max_length=100)
    created_at = models.DateTimeField()
    tokens = SearchVectorField()
    length = models.PositiveIntegerField(default=0)  # words: BM25's document length
    # What the document means (memory.search.semantic): 256 float16, b"" when its text has
    # no word the model knows, NULL for transaction events and until the worker embeds it.
    embedding = models.BinaryField(null=True, editable=False)
    # The embedder that wrote it (memory.search.semantic.model_name): vectors of another
    # model are re-embedded in the background and never compared meanwhile.
    embedding_model = models.CharField(max_length=300, default="", blank=True, editable=False)
    indexed_at = models.DateTimeField(auto_now=True)
    # Lexemes past PostgreSQL's 1 MB per tsvector go to this many SearchPart rows (0: the
    # document holds them all). A database default: bulk SQL writers need not name it.
    parts = models.PositiveSmallIntegerField(default=0, db_default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(frame__isnull=True) ^ Q(event__isnull=True),
                name="search_document_one_target",
            ),
        ]
        indexes = [
            GinIndex(fields=["tokens"], name="search_tokens_gin"),
            models.Index(fields=["context", "created_at"], name="search_context_time_idx"),
            # Frames in time: a long history's search finds frames older than its newest
            # documents through this and the word index together (memory.search.ranking).
            models.Index(
                fields=["context", "created_at"],
                name="search_frame_time_idx",
                condition=Q(frame__isnull=False),
            ),
            # What the index worker still has to embed (documents from before embeddings).
            models.Index(
                fields=["id"],
                name="search_embedding_missing",
                condition=Q(embedding__isnull=True) & ~Q(kind="transaction"),
            ),
        ]


class SearchPart(models.Model):
    """More lexemes of a document too large for one tsvector (PostgreSQL's 1 MB bound): a
    huge log is indexed in parts, so a word anywhere in it is found
    (`memory.search.vectors.weighted_tsvector_literals`). Rewritten with its document."""

    # Found by (document, number), the unique constraint's index.
    document = models.ForeignKey(
        SearchDocument, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+", db_index=False)
    number = models.PositiveSmallIntegerField()  # 1, 2, ...: the document itself is part 0
    tokens = SearchVectorField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document", "number"], name="search_part_number"),
        ]
        indexes = [
            GinIndex(fields=["tokens"], name="search_part_tokens_gin"),
            models.Index(fields=["context"], name="search_part_context_idx"),
        ]


class SearchLanguage(models.Model):
    """A language whose marked stems (``=fr:annul``) a context's search documents hold: a
    query is stemmed only in these (`memory.search.languages.held`). Written by the index
    worker with the documents, copied with them by a fork, filled for existing documents by
    migration 0033. A language no document holds any more may stay (a rewrite, an erasure):
    it only costs a query its stems in it."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+", db_index=False)
    language = models.CharField(max_length=8)  # `languages.SNOWBALL`'s code: fr, de, ru

    class Meta:
        constraints = [
            # Also the index a search reads a context's languages by.
            models.UniqueConstraint(fields=["context", "language"], name="search_language_once"),
        ]
