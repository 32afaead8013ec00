"""What a user is shown of a model reply is its text without the `(context-tx …)` forms and
`(delivers …)` markers (docs/agents.md §8): the reply's `message.text`, which is what the
agent message records, and `MemoryAgent`'s answer."""

from __future__ import annotations

import re
from typing import Any


def test_an_answer_shows_neither_transactions_nor_delivery_markers(make_client: Any) -> None:
    from morphz_client.agent import MemoryAgent, ModelReply, ModelRequest, ScriptedModel

    mz = make_client("reply-markup")

    def policy(request: ModelRequest) -> ModelReply:
        asked = re.findall(r"\[(@e\d+) user_message", request.prompt)[-1]
        return ModelReply(
            'Done. (context-tx (reason "noted") (derive goal (from '
            f"{asked}) (goal ship))) It ships today. (delivers {asked})"
        )

    turn = MemoryAgent(mz, ScriptedModel(policy)).run("Ship it")

    assert turn.status == "answered"
    assert "(delivers" not in turn.answer and "context-tx" not in turn.answer
    assert re.sub(r"\s+", " ", turn.answer).strip() == "Done. It ships today."
    message = turn.steps[-1].outcome["message"]
    recorded = mz.read_event_text(message["ref"])
    assert message["text"] == recorded == turn.answer
    assert mz.frame("goal")["body"] == {"goal": "ship"}


def test_a_withheld_message_still_says_what_the_user_would_see(make_client: Any) -> None:
    mz = make_client("reply-markup-withheld")
    asked = mz.append_event("user_message", "hi")["ref"]

    outcome = mz.take_apart(f"(context-tx (retire no-such-frame)) Hello! (delivers {asked})")

    assert outcome["rejected"] and outcome["message"]["status"] == "withheld"
    assert outcome["message"]["text"].strip() == "Hello!"
