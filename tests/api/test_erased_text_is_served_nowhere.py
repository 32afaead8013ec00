"""Done when (issue 31, R64): after erasing an event and the frame derived from it, no API
read, search, diff, export, evaluation or explorer page serves the erased text; the history
still verifies; an agent-scope token gets 403 on erasure.

Every GET route under a context is taken from the URL configuration (so a new read route
is checked without editing this test), with each of its parameters filled from the story."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from memory.contexts import issue_token
from memory.models import Context, Evaluation
from memory.search.indexer import drain
from memory.versions.exchange import export_context
from memory.versions.replay import verify_context
from tests.api.conftest import Api, error_of

CANARY = "quokka-canary-5501"
CARD = "4111 1111 1111 1111"
QUERIES = [
    {},
    {"as_of": 2},
    {"as_of": 3},
    {"q": "quokka"},
    {"q": "canary 5501"},
    {"q": "4111"},
    {"from": 0},
    {"include_bodies": "true"},
    {"offset": 0, "length": 4000},
]


def _context_get_routes() -> list[tuple[str, Any]]:
    """(route, view class) of every API route under /contexts/<slug>/ that answers GET."""
    routes = []
    for entry in get_resolver().url_patterns:
        if isinstance(entry, URLResolver) and str(entry.pattern) == "api/":
            for pattern in entry.url_patterns:
                if not isinstance(pattern, URLPattern):
                    continue
                route = str(pattern.pattern)
                view = getattr(pattern.callback, "view_class", None)
                if route.startswith("v1/contexts/<slug:slug>/") and hasattr(view, "get"):
                    routes.append((route, view))
    return routes


def _fill(route: str, story: dict[str, Any]) -> list[str]:
    path = route.removeprefix("v1/contexts/<slug:slug>/")
    paths = [path]
    for name, values in (
        ("<int:seq>", [str(s) for s in range(1, story["last_seq"] + 1)]),
        ("<int:evaluation_id>", [str(i) for i in story["evaluations"]]),
        ("<str:frame_id>", ["card", "other"]),
        ("<int:revision>", ["1", "2"]),
    ):
        paths = [p.replace(name, v) for p in paths if name in p for v in values] + [
            p for p in paths if name not in p
        ]
    return paths


@pytest.fixture
def story(api: Api, alpha: Context) -> dict[str, Any]:
    api.observe(f"my card is {CARD}; remember {CANARY}", kind="user_message")
    api.observe("deploy log: all green", kind="tool_result")
    api.post("evaluations/", {})
    api.commit(
        f'(context-tx (reason "keep {CANARY}") (derive card (from @e1) (number "{CARD}") '
        f'(note "{CANARY}")) (derive other (from @e2) (log green)) (relate card about other))'
    )
    api.commit(f'(context-tx (revise card (number "{CARD}") (note "{CANARY} again")))')
    api.post("recall/", {"frame_id": "other", "as_observation": True, "include_bodies": True})
    api.post("evaluations/", {})
    drain(context_id=alpha.pk)
    alpha.refresh_from_db()
    return {
        "last_seq": alpha.last_seq,
        "evaluations": list(Evaluation.objects.filter(context=alpha).values_list("pk", flat=True)),
    }


def _served(api: Api, story: dict[str, Any], client: Client) -> list[str]:
    """Every answer of every read route, of the export and of the explorer page."""
    out = []
    for route, _view in _context_get_routes():
        for path in _fill(route, story):
            for query in QUERIES:
                response = api.get(path, query)
                assert response.status_code < 500, (path, query)
                out.append(f"GET {path} {query}: {response.content.decode()}")
    out.append(api.post("recall/", {"frame_id": "other", "include_bodies": True}).content.decode())
    out.append(api.post("recall/", {"frame_id": "card", "include_events": True}).content.decode())
    out.append(client.get("/contexts/alpha/").content.decode())
    return out


def _export_text(alpha: Context, tmp_path: Path) -> str:
    path = tmp_path / "alpha.jsonl.gz"
    export_context(alpha, path)
    return gzip.decompress(path.read_bytes()).decode()


def test_erased_text_is_served_nowhere(
    api: Api, alpha: Context, story: dict[str, Any], staff: Any, tmp_path: Path
) -> None:
    client = Client()
    client.force_login(staff)
    before = _served(api, story, client)
    assert any(CANARY in text for text in before)  # the check can see the canary
    assert CANARY in _export_text(alpha, tmp_path)

    agent = api.post("erasures/", {"refs": ["@e1", "card"], "reason": "GDPR"})
    assert agent.status_code == 403
    assert error_of(agent)["code"] == "scope_insufficient"

    eraser = Api("alpha", issue_token(alpha, name="dpo", scope="erase").raw)
    response = eraser.post("erasures/", {"refs": ["@e1", "card"], "reason": "GDPR art. 17"})
    assert response.status_code == 201, response.json()
    assert {e["target"] for e in response.json()["erasures"]} == {"event", "frame"}

    leaks = [text[:300] for text in _served(api, story, client) if CANARY in text or CARD in text]
    assert leaks == []
    export = _export_text(alpha, tmp_path)
    assert CANARY not in export and CARD not in export
    assert '"type":"erasure"' in export
    assert verify_context(Context.objects.get(pk=alpha.pk)) == []
    tombstones = api.get("erasures/").json()["erasures"]
    assert {t["ref"] for t in tombstones} == {"@e1", "card"}
    assert all(t["reason"] == "GDPR art. 17" and "dpo" in t["erased_by"] for t in tombstones)


def test_the_tombstone_is_shown_where_the_text_was(api: Api, alpha: Context) -> None:
    api.observe(f"call {CANARY} now", kind="user_message")
    assert "erased" not in api.get("events/1/").json()
    eraser = Api("alpha", issue_token(alpha, scope="admin").raw)
    eraser.post("erasures/", {"spans": [{"ref": "@e1", "start": 5, "end": 23}], "reason": "r"})
    chunk = api.get("events/1/").json()
    assert chunk["content"].startswith("call ") and CANARY not in chunk["content"]
    assert [(t["target"], t["span"], t["reason"]) for t in chunk["erased"]] == [
        ("span", [5, 23], "r")
    ]
