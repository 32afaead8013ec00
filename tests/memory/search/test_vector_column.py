"""Vectors in PostgreSQL (memory.search.vector_column): where the server has pgvector the
documents' embeddings are kept as `vector` values too, in step with their bytes whoever
writes them, and the documents nearest a question in meaning are found in SQL, the same
ones the Python path finds; where it has not (CI's system PostgreSQL 15), nothing changes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.models import SearchDocument
from memory.search import semantic, vector_column
from memory.search.documents import embed_missing
from memory.search.indexer import drain
from memory.search.query import search
from memory.versions.forks import fork_context

NO_PGVECTOR = (
    "the database has no pgvector (`vector` extension), as CI's system PostgreSQL 15: "
    "search compares vectors in Python there, which the rest of the suite covers"
)
NOTES = [
    "Refund policy: refunds take five days to reach the card.",
    "The customer wants their money returned for the broken parcel.",
    "The deploy pipeline runs nightly at 02:00 and ships to staging.",
    "Rolled the release out to production after the canary stayed green.",
    "Lunch order: two pizzas and a salad for the on-call team.",
    "The cafeteria menu changes on Mondays; soup is served daily.",
    "Disk usage on db-2 reached 91 percent; old WAL files were archived.",
    "The database server ran out of storage overnight and stopped accepting writes.",
    "Password reset emails are delayed by the mail provider's outage.",
    "Users cannot log in: the sign-in page times out after thirty seconds.",
    "The quarterly budget review moved to Thursday afternoon.",
    "Finance approved the spending plan for the next three months.",
]
QUESTIONS = [
    "how do I get my money back",
    "when is new code shipped to servers",
    "what food is there to eat",
    "why is the machine full",
    "trouble signing into the account",
    "who signed off the costs",
]


def _near_statements(queries: CaptureQueriesContext) -> int:
    return sum("<#>" in query["sql"] for query in queries.captured_queries)


@pytest.fixture
def with_pgvector(db: Any) -> None:
    if not vector_column.available():
        pytest.skip(NO_PGVECTOR)


def test_the_vector_column_is_there_exactly_where_the_server_has_pgvector(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")
        (offered,) = cursor.fetchone()
    assert vector_column.available() is (offered == 1)


def test_sql_and_python_find_the_same_documents_by_meaning(release_team, with_pgvector, settings):
    agent = release_team
    for note in NOTES * 3:  # repeats: ties the two paths must break alike
        agent.observe(note, kind="agent_message")
    drain()
    found: dict[bool, list[list[tuple[str, float]]]] = {}
    for in_sql in (True, False):
        settings.MORPHZ_SEARCH_PGVECTOR = in_sql
        with CaptureQueriesContext(connection) as queries:
            found[in_sql] = [
                [(hit["ref"], round(hit["score"], 6)) for hit in search(agent.context, q)["hits"]]
                for q in QUESTIONS
            ]
        assert _near_statements(queries) == (len(QUESTIONS) if in_sql else 0)
    assert found[True] == found[False]
    by_meaning = [
        hit
        for q in QUESTIONS
        for hit in search(agent.context, q)["hits"]
        if hit["coverage"]["share"] == 0.0
    ]
    assert by_meaning  # the step compared is one that finds things


def _out_of_step() -> tuple[int, int]:
    """Documents whose vector is not their bytes decoded, and documents with a vector."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FILTER (WHERE embedding_vector IS DISTINCT FROM "
            "morphz_half_vector(embedding)), count(embedding_vector) FROM memory_searchdocument"
        )
        return cursor.fetchone()


def test_every_writer_keeps_the_vector_in_step_with_the_bytes(release_frame, with_pgvector):
    agent = release_frame
    for note in NOTES:
        agent.observe(note, kind="agent_message")
    drain()  # the index worker gives the vector itself
    embedded = SearchDocument.objects.filter(embedding__isnull=False).count()
    assert _out_of_step() == (0, embedded)
    document = SearchDocument.objects.filter(context=agent.context, kind="agent_message")[0]
    SearchDocument.objects.filter(pk=document.pk).update(embedding=None)
    assert _out_of_step() == (0, embedded - 1)  # the trigger clears it
    assert embed_missing() == 1  # re-embedding writes the bytes only: the trigger decodes
    assert _out_of_step() == (0, embedded)
    fork = fork_context(agent.context, slug="release-fork").context
    copied = SearchDocument.objects.filter(context=fork, embedding__isnull=False).count()
    assert copied > len(NOTES)
    assert _out_of_step() == (0, embedded + copied)


def test_the_text_given_to_pgvector_is_each_float16_value_exactly(with_pgvector):
    halves = np.arange(65536, dtype=np.uint16).view(np.float16)
    finite = halves[np.isfinite(halves)]  # pgvector holds no infinity or NaN
    for chunk in np.array_split(finite, 8):
        blob = chunk.tobytes()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT %s::vector::text, morphz_half_vector(%s)::text",
                [vector_column.literal(blob), blob],
            )
            given, decoded = cursor.fetchone()
        expected = chunk.astype(np.float32)
        assert np.array_equal(np.array(given[1:-1].split(","), dtype=np.float32), expected)
        assert np.array_equal(np.array(decoded[1:-1].split(","), dtype=np.float32), expected)


def test_a_vector_of_another_dimension_is_left_out_not_an_error(
    release_team, with_pgvector, settings
):
    agent = release_team
    agent.observe(NOTES[0], kind="agent_message")
    drain()
    short = np.ones(8, dtype=np.float16) / np.sqrt(8)
    SearchDocument.objects.filter(context=agent.context).update(
        embedding=short.astype(np.float16).tobytes()
    )
    settings.MORPHZ_SEARCH_PGVECTOR = True
    assert search(agent.context, QUESTIONS[0])["hits"] == []
    assert semantic.DIMENSIONS == 256
