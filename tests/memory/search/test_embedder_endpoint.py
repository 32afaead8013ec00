"""A pluggable embedder (R61): an OpenAI-compatible embeddings endpoint named in settings
embeds documents and questions; each vector records its model, and a change of model
re-embeds in the background with progress. The endpoint is a loopback HTTP server speaking
the OpenAI embeddings wire format (POST /embeddings, `{model, input}` -> `{data:
[{index, embedding}]}`), answering with vectors of a few concepts so meaning is known."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memory.models import SearchDocument
from memory.search.documents import embed_missing, embedding_progress
from memory.search.indexer import drain
from memory.search.query import search

# What each dimension means: a text holding any of its words points that way.
CONCEPTS = [("deploy", "部署", "release the build"), ("refund", "money"), ("lunch", "food")]


def concept_vector(text: str) -> list[float]:
    lowered = text.lower()
    return [float(any(w in lowered for w in words)) for words in CONCEPTS] + [0.1]


class Endpoint(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Endpoint.seen.append(
            {"path": self.path, "model": body["model"], "auth": self.headers["Authorization"]}
        )
        data = [
            {"object": "embedding", "index": n, "embedding": concept_vector(text)}
            for n, text in enumerate(body["input"])
        ]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint(settings: Any) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    settings.MORPHZ_EMBEDDINGS_URL = url
    settings.MORPHZ_EMBEDDINGS_MODEL = "concepts-1"
    settings.MORPHZ_EMBEDDINGS_KEY = "sk-loopback"
    Endpoint.seen = []
    yield url
    server.shutdown()
    server.server_close()


def test_an_endpoint_embeds_and_finds_a_note_in_another_language(release_team, endpoint):
    agent = release_team
    note = agent.observe("部署应用程序：先构建镜像，再推送到服务器。", kind="tool_result")
    agent.observe("Lunch is at noon on Fridays.", kind="tool_result")
    drain()
    hits = search(agent.context, "how to deploy the application")["hits"]
    assert [h["ref"] for h in hits] == [note]
    models = set(SearchDocument.objects.values_list("embedding_model", flat=True))
    assert models == {f"openai:concepts-1@{endpoint}"}
    assert {(s["path"], s["model"], s["auth"]) for s in Endpoint.seen} == {
        ("/v1/embeddings", "concepts-1", "Bearer sk-loopback")
    }


def test_a_change_of_model_re_embeds_in_the_background(release_team, endpoint, settings):
    agent = release_team
    agent.observe("Refund policy: money back within five days.", kind="tool_result")
    agent.observe("Lunch is at noon on Fridays.", kind="tool_result")
    drain()
    settings.MORPHZ_EMBEDDINGS_MODEL = "concepts-2"
    before = embedding_progress()
    assert before == {"model": f"openai:concepts-2@{endpoint}", "embedded": 0, "documents": 2}
    assert embed_missing(limit=1) == 1
    assert embedding_progress()["embedded"] == 1
    assert embed_missing(limit=10) == 1
    assert embed_missing(limit=10) == 0
    assert embedding_progress() == {**before, "embedded": 2}
    assert Endpoint.seen[-1]["model"] == "concepts-2"


def test_the_command_says_how_far_embedding_went(release_team, endpoint, settings):
    from io import StringIO

    from django.core.management import call_command

    release_team.observe("Refund policy: money back within five days.", kind="tool_result")
    drain()
    settings.MORPHZ_EMBEDDINGS_MODEL = "concepts-3"
    out = StringIO()
    call_command("search_embeddings", stdout=out)
    assert out.getvalue().strip() == f"openai:concepts-3@{endpoint}: 0 of 1 documents embedded (0%)"
