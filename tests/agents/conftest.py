"""Agents tests: a live server on the test database and a client for a fresh context."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from tests.api.live import unthrottled  # noqa: F401
from tests.served import ServedApp, served_app

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def make_client(live_server: Any, transactional_db: Any, request: Any) -> Iterator[Any]:
    """`make_client(slug, **settings)`: a context and a client holding its token."""
    request.getfixturevalue("unthrottled")
    from morphz_client import MorphzClient

    clients: list[Any] = []

    def make(slug: str, **settings: Any) -> Any:
        context = create_context(slug, **settings)
        client = MorphzClient(live_server.url, issue_token(context).raw, context=slug)
        client.token = issue_token(context).raw
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


FIRST_EXAMPLE = """(context-tx
  (base-version {base})
  (reason "测试结果已吸收，继续准备发布")
  (derive test-result (from @e42) (tests passed))
  (revise release (goal ship-v1) (stage packaging))
  (relate test-result supports release)
  (retire @e42))"""

TEST_LOG = "\n".join(f"test_{n:04d} ... ok" for n in range(3000)) + "\n3000 passed"


def build_release_story(mz: Any) -> None:
    """The first worked example's setting (docs/design.md), exactly: `release` waits for tests, the regression
    log is @e42 and the context is at version 12 when the model reads it. The padding is
    agent work: 29 earlier tool outputs, digested into 11 frames and retired (each commit is
    an event too)."""
    mz.submit("(context-tx (derive release (goal ship-v1) (stage waiting-for-tests)))")
    outputs = [
        mz.append_event("tool_result", f"earlier output {i}: build step {i} finished")["ref"]
        for i in range(1, 30)
    ]
    mz.evaluate()
    for batch in range(11):
        refs = " ".join(outputs[batch::11])
        mz.submit(
            f"(context-tx (derive step-batch-{batch} (from {refs}) (outcome finished))"
            f" (retire {refs}))"
        )
    log = mz.append_event("tool_result", TEST_LOG)
    assert log["ref"] == "@e42"
    assert mz.context()["version"] == 12


def first_example_policy(prompt: str) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """The model's side of the first example, deterministic: read @e42 (previewed; its tail
    says the suite passed), answer with the packaging call and the transaction in one reply;
    once the packaging result arrives, record it."""
    import re

    from morphz_client.agent import state_version

    base = state_version(prompt)
    packaged = re.search(r"\[(@e\d+) tool_result[^\]]*\]\n\| packaged (\S+)", prompt)
    if packaged:
        ref, artifact = packaged.group(1), packaged.group(2)
        tx = (
            f'(context-tx (base-version {base}) (reason "packaging result absorbed")'
            f" (revise release (from {ref}) (goal ship-v1) (stage packaged)"
            f" (artifact {artifact})) (retire {ref}))"
        )
        return f"Packaging finished: {artifact}.", [("context_tx", {"tx": tx})]
    assert "[@e42 tool_result" in prompt and "3000 passed" in prompt
    return (
        "The regression suite passed (@e42); packaging started.",
        [
            ("package", {"target": "ship-v1"}),
            ("context_tx", {"tx": FIRST_EXAMPLE.format(base=base)}),
        ],
    )


def package_tool(mz: Any, seen: dict[str, Any]) -> Any:
    """The external packaging tool; notes what memory said while it ran."""
    from morphz_client.agent import Tool

    def package(arguments: dict[str, Any]) -> str:
        seen["release"] = mz.frame("release")
        seen["frames"] = mz.frames()["frames"]
        seen["actions"] = mz.events(kind="action")["events"]
        seen["arguments"] = arguments
        return "packaged shop-web-1.0.0.tgz"

    return Tool(
        "package",
        "Build the release package",
        {"type": "object", "properties": {"target": {"type": "string"}}, "required": ["target"]},
        package,
    )


def check_first_example(mz: Any, turn: Any, at_packaging: dict[str, Any]) -> None:
    """Memory after the loop is as docs/design.md says, step by step."""
    assert turn.status == "answered", turn
    assert turn.answer == "Packaging finished: shop-web-1.0.0.tgz."
    assert len(turn.steps) == 2
    first = turn.steps[0].outcome
    # One reply, taken apart: the transaction committed, the tool call became an action.
    assert [t["status"] for t in first["transactions"]] == ["committed"]
    assert first["transactions"][0]["receipt"]["version"] == 13
    assert [(a["name"], a["status"]) for a in first["actions"]] == [("package", "registered")]
    action_ref = first["actions"][0]["ref"]
    assert at_packaging["arguments"] == {"target": "ship-v1"}
    # Memory while packaging ran: tests passed, ready to package; nothing claims success.
    release = at_packaging["release"]
    assert release["revision"] == 2
    assert release["body"] == {"goal": "ship-v1", "stage": "packaging"}
    frames = {f["id"]: f for f in at_packaging["frames"]}
    assert frames["test-result"]["sources"] == ["@e42"]
    assert frames["test-result"]["body"] == {"tests": "passed"}
    assert not any("packaged" in str(f["body"]) for f in at_packaging["frames"])
    assert at_packaging["actions"][0]["ref"] == action_ref
    assert mz.relations(subject="test-result")["relations"][0]["object"] == "release"
    assert mz.read_event("@e42", length=1)["status"] == "retired"
    assert mz.read_event_text("@e42").endswith("3000 passed")  # history keeps it all
    # The packaging result arrived as a new observation delivering the action...
    result_ref = turn.steps[0].tool_results[0]["ref"]
    result = mz.read_event(result_ref)
    assert result["kind"] == "tool_result"
    assert result["content"] == "packaged shop-web-1.0.0.tgz"
    assert int(result_ref[2:]) > int(action_ref[2:])
    assert result_ref in turn.steps[1].evaluation["claimed"]
    assert (
        f"[{result_ref} tool_result thread=main delivers {action_ref}]"
        in (turn.steps[1].evaluation["text"])
    )
    # ...and only then did memory say the package exists, citing that observation.
    release = mz.frame("release")
    assert release["body"] == {
        "goal": "ship-v1",
        "stage": "packaged",
        "artifact": "shop-web-1.0.0.tgz",
    }
    assert result_ref in release["sources"]
    history = release["write_history"]
    assert [h["version"] for h in history] == [1, 13, 14]
    assert history[1]["text"] == FIRST_EXAMPLE.format(base=12)


AsgiServer = ServedApp


@pytest.fixture(scope="session")
def asgi_server(
    django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServedApp]:
    """`uvicorn morphz.asgi:application` (the served app, /mcp/ included) on the test
    database, in a subprocess on a loopback port."""
    with served_app(tmp_path_factory.mktemp("asgi") / "uvicorn.log", "/api/v1/") as app:
        yield app
