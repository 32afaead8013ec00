"""R67: `MorphzStore` gives the answers LangGraph's own `InMemoryStore` gives.

Each scenario runs once against the reference and once against a `MorphzStore` on a live server
and the two answer lists must be equal (and, so that an empty answer cannot pass, each scenario
also checks a few answers outright)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore


def seen(answer: Any) -> Any:
    """An answer without its timestamps (each store stamps its own clock)."""
    if isinstance(answer, Item):
        return ("item", answer.namespace, answer.key, answer.value)
    if isinstance(answer, list):
        return [seen(a) for a in answer]
    return answer


def as_set(items: list[Item]) -> list[Any]:
    """Search answers in a fixed order: the stores order equal-time items differently."""
    return sorted((i.namespace, i.key, repr(i.value)) for i in items)


def both(make_client: Any, scenario: Callable[[BaseStore], list[Any]], **settings: Any) -> Any:
    from morphz_client.langgraph import MorphzStore

    reference = scenario(InMemoryStore())
    ours = scenario(MorphzStore(make_client("lg-store", **settings)))
    assert ours == reference
    return ours


def test_put_get_replace_delete(make_client: Any) -> None:
    def scenario(store: BaseStore) -> list[Any]:
        ns = ("users", "ada")
        out = [seen(store.get(ns, "prefs"))]
        store.put(ns, "prefs", {"theme": "dark"})
        out.append(seen(store.get(ns, "prefs")))
        store.put(ns, "prefs", {"theme": "light", "font": "serif"})
        out.append(seen(store.get(ns, "prefs")))
        store.delete(ns, "prefs")
        out.append(seen(store.get(ns, "prefs")))
        store.delete(ns, "never-there")
        store.put(ns, "prefs", {"theme": "back"})
        out.append(seen(store.get(ns, "prefs")))
        store.put(ns, "prefs", None)  # type: ignore[arg-type]
        out.append(seen(store.get(ns, "prefs")))
        out.append(seen(store.get(("users",), "prefs")))
        return out

    answers = both(make_client, scenario)
    assert answers[0] is None and answers[3] is None and answers[5] is None
    assert answers[2] == ("item", ("users", "ada"), "prefs", {"theme": "light", "font": "serif"})
    assert answers[4][3] == {"theme": "back"}


def test_a_retired_item_comes_back_on_put(make_client: Any) -> None:
    """With no grace window a deleted item's frame is retired at once; a put restores it."""

    def scenario(store: BaseStore) -> list[Any]:
        store.put(("n",), "k", {"v": "1"})
        store.delete(("n",), "k")
        first = seen(store.get(("n",), "k"))
        store.put(("n",), "k", {"v": "2"})
        return [first, seen(store.get(("n",), "k"))]

    assert both(make_client, scenario, grace_ticks=0) == [None, ("item", ("n",), "k", {"v": "2"})]


def test_values_read_back_exactly(make_client: Any) -> None:
    values = [
        {"n": 3, "f": 0.1, "yes": True, "no": False, "none": None},
        {"nested": {"list": [1, "1", [True, None]], "empty": {}}, "empty_list": []},
        {"text": "3", "true": "true", "null": "null"},  # strings that look like scalars
        {"unicode": "测试 ✓ \u00e9", "from": "a top-level key the JSON form refuses in a body"},
        {},
        {"big": 2**70, "neg": -1.5e-300},
    ]

    def scenario(store: BaseStore) -> list[Any]:
        for i, value in enumerate(values):
            store.put(("values",), f"v{i}", value)
        return [seen(store.get(("values",), f"v{i}")) for i in range(len(values))]

    answers = both(make_client, scenario)
    assert [a[3] for a in answers] == values
    assert type(answers[0][3]["n"]) is int and answers[2][3]["text"] == "3"


def test_keys_that_fold_alike_stay_apart(make_client: Any) -> None:
    """Frame ids allow only a-z 0-9 . _ -: the digest keeps every pair apart."""
    pairs = [
        (("a",), "Key"),
        (("a",), "key"),
        (("a",), "k e y"),
        (("a",), "k-e-y"),
        (("a",), "k.e.y"),
        (("a", "b"), "c"),
        (("a-b",), "c"),
        (("a", "b-c"), ""),
        (("a", "b"), "-c"),
        (("A",), "key"),
        (("a",), "ключ"),
        (("a",), "x" * 500),
        (("a",), "x" * 501),
    ]

    def scenario(store: BaseStore) -> list[Any]:
        for i, (ns, key) in enumerate(pairs):
            store.put(ns, key, {"i": i})
        return [seen(store.get(ns, key)) for ns, key in pairs]

    answers = both(make_client, scenario)
    assert [a[3]["i"] for a in answers] == list(range(len(pairs)))


def test_search_prefix_filter_and_pages(make_client: Any) -> None:
    def scenario(store: BaseStore) -> list[Any]:
        store.put(("docs", "a"), "1", {"kind": "note", "n": 1, "meta": {"tag": "x"}})
        store.put(("docs", "a"), "2", {"kind": "todo", "n": 2, "meta": {"tag": "y"}})
        store.put(("docs", "b"), "3", {"kind": "note", "n": 3, "tags": ["p", "q"]})
        store.put(("other",), "4", {"kind": "note", "n": 4})
        pages = [store.search(("docs",), limit=2, offset=o) for o in (0, 2, 4)]
        return [
            as_set(store.search(("docs",))),
            as_set(store.search(("docs", "a"))),
            as_set(store.search(())),
            as_set(store.search(("docs",), filter={"kind": "note"})),
            as_set(store.search(("docs",), filter={"meta": {"tag": "y"}})),
            as_set(store.search(("docs",), filter={"tags": ["p", "q"]})),
            as_set(store.search(("docs",), filter={"n": {"$gt": 1, "$lte": 3}})),
            as_set(store.search(("docs",), filter={"kind": {"$ne": "note"}})),
            as_set(store.search(("docs",), filter={"missing": "x"})),
            [len(p) for p in pages],
            as_set([i for p in pages for i in p]),
            as_set(store.search(("nothing",))),
        ]

    answers = both(make_client, scenario)
    assert [k for _ns, k, _v in answers[0]] == ["1", "2", "3"]
    assert [k for _ns, k, _v in answers[6]] == ["2", "3"]
    assert answers[9] == [2, 1, 0] and answers[10] == answers[0]


def test_list_namespaces(make_client: Any) -> None:
    def scenario(store: BaseStore) -> list[Any]:
        for ns in [
            ("a", "b", "c"),
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("b", "a", "f"),
            ("users", "123"),
            ("users", "456", "settings"),
        ]:
            store.put(ns, "k", {"v": "1"})
        return [
            store.list_namespaces(),
            store.list_namespaces(prefix=("a", "b")),
            store.list_namespaces(suffix=("f",)),
            store.list_namespaces(prefix=("a", "*", "f")),
            store.list_namespaces(prefix=("*", "*", "f")),
            store.list_namespaces(suffix=("*", "f")),
            store.list_namespaces(prefix=("a",), max_depth=2),
            store.list_namespaces(max_depth=1),
            store.list_namespaces(limit=3, offset=2),
            store.list_namespaces(prefix=("nope",)),
        ]

    answers = both(make_client, scenario)
    assert answers[6] == [("a", "b"), ("a", "c")]
    assert len(answers[0]) == 8 and answers[8] == answers[0][2:5]


def test_a_namespace_without_items_is_not_listed(make_client: Any) -> None:
    """As LangGraph's PostgresStore (its InMemoryStore keeps listing an emptied namespace)."""
    from morphz_client.langgraph import MorphzStore

    store = MorphzStore(make_client("lg-gone"))
    store.put(("gone",), "k", {"v": "1"})
    store.put(("kept",), "k", {"v": "1"})
    store.delete(("gone",), "k")
    assert store.list_namespaces() == [("kept",)]


def test_a_batch_reads_before_its_writes_and_the_last_write_wins(make_client: Any) -> None:
    def scenario(store: BaseStore) -> list[Any]:
        store.put(("b",), "seen", {"v": "old"})
        answers = store.batch(
            [
                PutOp(("b",), "seen", {"v": "new"}),
                GetOp(("b",), "seen"),
                PutOp(("b",), "twice", {"v": "first"}),
                PutOp(("b",), "twice", {"v": "second"}),
                PutOp(("b",), "gone", {"v": "x"}),
                PutOp(("b",), "gone", None),
                SearchOp(("b",)),
            ]
        )
        return [
            seen(answers),
            seen(store.get(("b",), "seen")),
            seen(store.get(("b",), "twice")),
            seen(store.get(("b",), "gone")),
        ]

    answers = both(make_client, scenario)
    assert answers[0][1] == ("item", ("b",), "seen", {"v": "old"})
    assert answers[2][3] == {"v": "second"} and answers[3] is None


def test_the_async_methods(make_client: Any) -> None:
    def scenario(store: BaseStore) -> list[Any]:
        async def run() -> list[Any]:
            await store.aput(("x",), "k", {"v": 1})
            got = await store.aget(("x",), "k")
            found = await store.asearch(("x",), filter={"v": 1})
            spaces = await store.alist_namespaces()
            await store.adelete(("x",), "k")
            return [seen(got), as_set(found), spaces, seen(await store.aget(("x",), "k"))]

        return asyncio.run(run())

    answers = both(make_client, scenario)
    assert answers[0] == ("item", ("x",), "k", {"v": 1}) and answers[3] is None


def test_bad_namespaces_are_refused_alike(make_client: Any) -> None:
    from langgraph.store.base import InvalidNamespaceError
    from morphz_client.langgraph import MorphzStore

    for store in (InMemoryStore(), MorphzStore(make_client("lg-bad"))):
        with pytest.raises(InvalidNamespaceError):
            store.put((), "k", {"v": "1"})
        with pytest.raises(InvalidNamespaceError):
            store.put(("a.b", ""), "k", {"v": "1"})
        with pytest.raises(NotImplementedError):
            store.put(("a",), "k", {"v": "1"}, ttl=5)
