"""Every word findable (issue 30): an event whose lexemes pass PostgreSQL's 1 MB per
tsvector is indexed in parts, so a word anywhere in it is found, and the hit says so."""

from __future__ import annotations

import base64
import random

from memory.models import SearchDocument, SearchPart
from memory.search.documents import index_targets
from memory.search.indexer import drain
from memory.search.query import search
from memory.versions.forks import fork_context


def _blob(chars: int) -> str:
    """An unbroken base64 run (a screenshot or a core dump pasted into a log)."""
    raw = random.Random(30).randbytes(chars * 3 // 4)
    return base64.b64encode(raw).decode()


def test_an_error_after_a_huge_base64_blob_is_found(release_team):
    agent = release_team
    blob = _blob(1_330_000)
    ref = agent.observe(f"attachment: {blob}\nERROR: checkout-gateway refused the token")
    agent.observe("the deploy went fine")
    drain()
    result = search(agent.context, "checkout-gateway refused")
    assert [hit["ref"] for hit in result["hits"]] == [ref]
    assert result["hits"][0]["index_parts"] > 1
    document = SearchDocument.objects.get(event__seq=int(ref[2:]))
    assert document.parts == result["hits"][0]["index_parts"] - 1
    assert SearchPart.objects.filter(document=document).count() == document.parts


def test_a_word_anywhere_in_a_five_megabyte_log_is_found(release_team):
    agent = release_team
    lines = [f"req {i:07d} id={i * 7919:x} ok" for i in range(148_000)]
    lines[140_000] = "req 0140000 id=0 panic: disk quota exhausted"
    log = "\n".join(lines)
    tail = [f"span {i:07d} t={i * 104729:x}" for i in range(50_000)] + ["flushed to s3"]
    ref = agent.observe(log, payload={"trace": "\n".join(tail)})
    assert len(log) + len("\n".join(tail)) > 5_000_000
    drain()
    assert [hit["ref"] for hit in search(agent.context, "quota exhausted")["hits"]] == [ref]
    assert [hit["ref"] for hit in search(agent.context, "flushed s3")["hits"]] == [ref]


def test_a_document_indexed_again_keeps_only_its_new_parts(release_team):
    agent = release_team
    ref = agent.observe(f"blob {_blob(1_330_000)} then the needle")
    drain()
    document = SearchDocument.objects.get(event__seq=int(ref[2:]))
    assert document.event_id is not None
    index_targets([], [document.event_id])
    document.refresh_from_db()
    assert document.parts > 0
    assert SearchPart.objects.filter(document=document).count() == document.parts
    assert [hit["ref"] for hit in search(agent.context, "needle")["hits"]] == [ref]


def test_a_fork_indexes_a_huge_event_again_and_finds_its_last_words(release_team):
    agent = release_team
    ref = agent.observe(f"blob {_blob(1_330_000)} then the needle")
    agent.observe("a small note about the needle")
    drain()
    fork = fork_context(agent.context).context
    drain()
    assert ref in [hit["ref"] for hit in search(fork, "needle")["hits"]]
    copied = SearchDocument.objects.get(context=fork, ref=ref)
    assert SearchPart.objects.filter(document=copied).count() == copied.parts > 0
