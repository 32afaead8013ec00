"""How the retriever ranks learned frames: stems, the whole query, statuses."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context, issue_token
from memory.search.indexer import drain

FILLER = {
    f"case-filler-{n}": {"kind": "case", "request": request, "outcome": "answered"}
    for n, request in enumerate(["opening hours", "gift cards", "store locations"])
}


def learned(rest: Any, slug: str, cases: dict[str, dict[str, Any]], retired: list[str]) -> Any:
    """A context holding `cases` (and three unrelated ones), `retired` retired."""
    context = create_context(slug, capacity_tokens=200_000)
    client = rest(slug, issue_token(context).raw)
    (event,) = client.append_events([{"kind": "external_fact", "content": "past conversations"}])
    ops: list[dict[str, Any]] = [
        {"op": "derive", "id": frame_id, "from": [event["ref"]], "body": body}
        for frame_id, body in {**cases, **FILLER}.items()
    ]
    if retired:
        ops.append({"op": "retire", "refs": retired})
    version = int(client.context()["version"])
    client.submit(ops=ops, base_version=version, reason="cases learned")
    drain()
    return client


def test_a_word_said_in_another_form_counts_as_the_request_saying_it(rest: Any) -> None:
    from morphz_statebench.retrieval import Retriever

    client = learned(
        rest,
        "sb-stems",
        {
            "case-cancelled": {"kind": "case", "request": "my trip was cancelled", "outcome": "ok"},
            "case-delayed": {"kind": "case", "request": "my trip is late", "outcome": "cancel"},
        },
        [],
    )
    scores = Retriever(client).word_scores("cancel trip")
    # `cancel` is in one request as `cancelled` and only in the other's outcome
    assert scores["case-cancelled"] > scores["case-delayed"]


def test_the_whole_query_outranks_one_rare_word_of_it(rest: Any) -> None:
    from morphz_statebench.retrieval import Retriever

    client = learned(
        rest,
        "sb-whole",
        {
            "case-word": {"kind": "case", "request": "blender", "outcome": "done"},
            "case-whole": {
                "kind": "case",
                "request": "help please",
                "outcome": "refund the shipping of the damaged blender",
            },
        },
        [],
    )
    retriever = Retriever(client)
    query = "refund shipping damaged blender"
    words = retriever.word_scores(query)
    assert words["case-word"] > words["case-whole"]  # the rare word in the request alone
    assert [item.frame_id for item in retriever.retrieve(query, 2)] == ["case-whole", "case-word"]


def test_a_retired_case_is_ranked_on_its_match_not_its_status(rest: Any) -> None:
    from morphz_statebench.retrieval import Retriever

    client = learned(
        rest,
        "sb-status",
        {
            "case-retired": {
                "kind": "case",
                "request": "return the blender from my kitchen order",
                "outcome": "returned",
            },
            "case-active": {
                "kind": "case",
                "request": "return the blender from my order",
                "outcome": "returned",
            },
        },
        ["case-retired"],
    )
    # generalised by a procedure is not outdated: the better match comes first
    query = "return the blender from my kitchen order"
    assert Retriever(client).retrieve(query, 1)[0].frame_id == "case-retired"
