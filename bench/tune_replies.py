"""Reply context and ranking weights tried in one process over one index: LoCoMo's
conversations (bench_locomo) and the relevance groups (bench_relevance) loaded once into
their own database (MORPHZ_BENCH_DB, default morphz_tune_replies; kept between runs unless
`--fresh`), then each configuration re-indexes the conversational events (text only, the
embeddings stay) and is scored: LoCoMo recall@10 of the dev split and of the rest, and
MRR / nDCG@10 / recall@10 of each relevance group.

    .venv/bin/python bench/tune_replies.py [--fresh] [--held-out] [--groups] NAME ...

NAME is one of CONFIGS below (`off`, `on`, ...). Tune on the dev split only.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_tune_replies")

from common import setup_django

DEV = {"conv-26", "conv-30"}

# A configuration: settings, module constants ("module.NAME": value) and the reply rule
# (`documents.borrowed`'s replacement, or None for the code's own).
Config = dict[str, Any]


def _content_words(text: str) -> set[str]:
    from memory.search.query import is_function_word
    from memory.search.textindex import SECONDARY, index_terms

    return {
        w for w in index_terms(text)[0] if not w.startswith(SECONDARY) and not is_function_word(w)
    }


def _unless_echoed(share: float) -> Callable[[str, str, str | None], str | None]:
    """Borrow nothing when the reply says `share` or more of its turn's content words."""

    def rule(kind: str, content: str, context: str | None) -> str | None:
        if not context:
            return None
        said, heard = _content_words(content), _content_words(context)
        return context if not heard or len(said & heard) < share * len(heard) else None

    return rule


def _short_reply(most: int) -> Callable[[str, str, str | None], str | None]:
    """Borrow only into a reply of at most `most` content words."""

    def rule(kind: str, content: str, context: str | None) -> str | None:
        return context if context and len(_content_words(content)) <= most else None

    return rule


def _short_turn(most: int) -> Callable[[str, str, str | None], str | None]:
    """Borrow only from a turn of at most `most` content words."""

    def rule(kind: str, content: str, context: str | None) -> str | None:
        return context if context and len(_content_words(context)) <= most else None

    return rule


def _on_topic(most: int, short: int) -> Callable[[str, str, str | None], str | None]:
    """Borrow from a turn of at most `most` content words, when the reply shares one of
    them or is a short answer (at most `short` content words)."""

    def rule(kind: str, content: str, context: str | None) -> str | None:
        if not context:
            return None
        said, heard = _content_words(content), _content_words(context)
        fits = len(heard) <= most and (bool(said & heard) or len(said) <= short)
        return context if fits else None

    return rule


def _into(kind_wanted: str, most: int) -> Callable[[str, str, str | None], str | None]:
    """Borrow only into messages of one kind, from a turn of at most `most` content words."""
    short = _short_turn(most)

    def rule(kind: str, content: str, context: str | None) -> str | None:
        return short(kind, content, context) if kind == kind_wanted else None

    return rule


def _with_turn(most: int) -> Callable[[str, str | None], str]:
    def mode(own: str, answers: str | None) -> str:
        if answers and len(_content_words(answers)) <= most:
            return answers + "\n" + own
        return own

    return mode


CONFIGS: dict[str, Config] = {
    # Only queries of at most N content words look for borrowed words (the code's: 11).
    **{f"q{n}": {"reply": True, "documents.QUESTION_WORDS": n} for n in (7, 9, 11, 13, 99)},
    # Replies embedded with the turn they answer (text before theirs), reply context off.
    "emb20": {"reply": False, "embed": _with_turn(20)},
    "emb40": {"reply": False, "embed": _with_turn(40)},
    "emball": {"reply": False, "embed": _with_turn(10**6)},
    "off": {"reply": False},
    "on": {"reply": True},  # the code's own rule (`documents.borrowed`)
    "all": {"reply": True, "rule": lambda kind, content, context: context},
    "echo25": {"reply": True, "rule": _unless_echoed(0.25)},
    "echo35": {"reply": True, "rule": _unless_echoed(0.35)},
    "reply20": {"reply": True, "rule": _short_reply(20)},
    "turn30": {"reply": True, "rule": _short_turn(30)},
    "turn20": {"reply": True, "rule": _short_turn(20)},
    "turn15": {"reply": True, "rule": _short_turn(15)},
    "turn12": {"reply": True, "rule": _short_turn(12)},
    "user20": {"reply": True, "rule": _into("user_message", 20)},
    "agent20": {"reply": True, "rule": _into("agent_message", 20)},
    "turn30w45": {"reply": True, "rule": _short_turn(30), "ranking.REPLY_WEIGHT": 0.45},
    "topic30": {"reply": True, "rule": _on_topic(30, 10)},
}


def _load(fresh: bool) -> tuple[list[Any], list[Any]]:
    """LoCoMo's conversations (conversation, context id, ref -> dia id) and the relevance
    groups, loaded now (`fresh`) or found in the database."""
    import bench_locomo
    import bench_relevance
    from django.db import connection

    from memory.contexts import create_context
    from memory.models import Context, Event
    from memory.search.indexer import drain
    from memory.timeline.events import append_event

    conversations = bench_locomo.load(bench_locomo.DATA, set(), set())
    loaded = []
    for conv in conversations:
        slug = f"locomo-{conv.sample_id}".lower()
        dia_of: dict[str, str] = {}
        if fresh:
            context = create_context(slug, capacity_tokens=10**9)
            for dia, content, payload in conv.turns:
                mine = content.startswith(f"{conv.speaker_b}: ")
                kind = "agent_message" if mine else "user_message"
                event = append_event(context.pk, kind=kind, content=content, payload=payload)
                dia_of[event.event.ref] = dia
            context_id = context.pk
        else:
            context_id = Context.objects.get(slug=slug).pk
            seqs = Event.objects.filter(context_id=context_id).order_by("seq")
            refs = [f"@e{seq}" for seq in seqs.values_list("seq", flat=True)]
            dia_of = {ref: dia for ref, (dia, _, _) in zip(refs, conv.turns, strict=True)}
        loaded.append((conv, context_id, dia_of))
    groups = []
    if fresh:
        groups = [bench_relevance.demo_group(), bench_relevance.statebench_group()]
        groups.append(
            bench_relevance.events_group(
                "multilingual",
                bench_relevance.MULTILINGUAL_DOCS,
                bench_relevance.MULTILINGUAL_QUERIES,
            )
        )
        groups.append(
            bench_relevance.events_group(
                "code", bench_relevance.CODE_DOCS, bench_relevance.CODE_QUERIES
            )
        )
        drain(batch_size=500)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memory_searchdocument")
    else:
        groups = _groups_again()
    for group in groups:
        group.load_documents()
        group.queries = [(q, group.resolve(labels)) for q, labels in group.queries]
    return loaded, groups


def _groups_again() -> list[Any]:
    """The relevance groups of a database loaded before (same contexts, same order)."""
    import bench_relevance

    from memory.models import Context, Event

    demo = bench_relevance.Group("demo", Context.objects.get(slug="demo").pk)
    demo.queries = list(bench_relevance.DEMO_QUERIES)
    state = bench_relevance.Group("statebench", Context.objects.get(slug="bench-statebench").pk)
    state.depth = 300
    threads = {}
    import glob
    from pathlib import Path

    for n, path in enumerate(
        sorted(glob.glob(str(bench_relevance.DATA / "train_trajectories" / "*" / "*.json")))
    ):
        threads[f"t{n}"] = f"{Path(path).parent.name}/{Path(path).stem}"
    for seq, thread in Event.objects.filter(context_id=state.context_id).values_list(
        "seq", "thread"
    ):
        if thread in threads:
            state.unit_of[f"@e{seq}"] = threads[thread]
    bench_relevance.label_queries(state, set(threads.values()), "test")
    groups = [demo, state]
    for name, docs, queries in (
        ("multilingual", bench_relevance.MULTILINGUAL_DOCS, bench_relevance.MULTILINGUAL_QUERIES),
        ("code", bench_relevance.CODE_DOCS, bench_relevance.CODE_QUERIES),
    ):
        group = bench_relevance.Group(name, Context.objects.get(slug=f"bench-{name}").pk)
        keys = {key: f"@e{n}" for n, (key, _) in enumerate(docs, start=1)}
        group.queries = [(q, {keys[k]: g for k, g in labels.items()}) for q, labels in queries]
        groups.append(group)
    return groups


def _statebench_dev(state: Any) -> Any:
    """STATE-Bench's development queries over the same memory: each train task's opening
    message, its own trajectory left out (`bench_relevance.statebench_group`)."""
    import bench_relevance

    dev = bench_relevance.Group("statebench-dev", state.context_id)
    dev.depth, dev.unit_of = state.depth, state.unit_of
    bench_relevance.label_queries(dev, set(state.unit_of.values()), "train")
    return dev


def _reindex_messages(context_ids: list[int]) -> None:
    """Rewrite the conversational events' text (tokens and length), embeddings untouched."""
    from django.db import connection, transaction

    from memory.models import Event
    from memory.search import documents, semantic
    from memory.search.query import forget_statistics

    pks = list(
        Event.objects.filter(
            context_id__in=context_ids, kind__in=documents.CONTEXT_KINDS
        ).values_list("pk", flat=True)
    )
    enabled = semantic.enabled
    semantic.enabled = lambda: False
    try:
        for start in range(0, len(pks), 1000):
            docs = documents._event_documents(pks[start : start + 1000])
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    "UPDATE memory_searchdocument d SET tokens = v.tokens::tsvector,"
                    " length = v.length FROM unnest(%s::bigint[], %s::text[], %s::int[])"
                    " AS v(id, tokens, length) WHERE d.event_id = v.id",
                    [
                        list(docs),
                        [d.tokens for d in docs.values()],
                        [d.length for d in docs.values()],
                    ],
                )
    finally:
        semantic.enabled = enabled
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    forget_statistics()


def _reembed(context_ids: list[int], mode: Any) -> None:
    """Embed the conversational events again: `mode(content, answers)` gives the text (None:
    the event's own text, as the code embeds it)."""
    import json as _json

    from django.db import connection, transaction

    from memory.models import Event
    from memory.search import documents, semantic
    from memory.search.vectors import event_text

    pks = list(
        Event.objects.filter(
            context_id__in=context_ids, kind__in=documents.CONTEXT_KINDS
        ).values_list("pk", flat=True)
    )
    for start in range(0, len(pks), 1000):
        with connection.cursor() as cursor:
            cursor.execute(
                documents._sql("event_rows"),
                {
                    "ids": pks[start : start + 1000],
                    "kinds": list(documents.CONTEXT_KINDS),
                    "chars": documents.CONTEXT_CHARS,
                    "lookback": documents.CONTEXT_LOOKBACK,
                },
            )
            rows = named_rows_(cursor)
        texts = []
        for row in rows:
            body = _json.loads(row["payload"]) if row["payload"] else None
            own = event_text(row["content"], body)
            texts.append((mode(own, row["answers"]) if mode else own)[: semantic.EMBED_CHARS])
        blobs = semantic.embeddings(texts)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memory_searchdocument d SET embedding = v.e"
                " FROM unnest(%s::bigint[], %s::bytea[]) AS v(id, e) WHERE d.event_id = v.id",
                [[row["id"] for row in rows], blobs],
            )


def named_rows_(cursor: Any) -> list[Any]:
    from memory.sql import named_rows

    return named_rows(cursor)


def _apply(config: Config) -> Callable[[], None]:
    """Set a configuration; returns what puts the previous one back."""
    import importlib

    from django.conf import settings

    from memory.search import documents

    undo: list[Callable[[], None]] = []
    old_reply = settings.MORPHZ_SEARCH_REPLY_CONTEXT
    settings.MORPHZ_SEARCH_REPLY_CONTEXT = config.get("reply", old_reply)
    undo.append(lambda: setattr(settings, "MORPHZ_SEARCH_REPLY_CONTEXT", old_reply))
    old_rule = documents.borrowed
    if config.get("rule") is not None:
        documents.borrowed = config["rule"]
    undo.append(lambda: setattr(documents, "borrowed", old_rule))
    for key, value in config.items():
        if "." in key:
            module_name, name = key.rsplit(".", 1)
            module = importlib.import_module(f"memory.search.{module_name}")
            old = getattr(module, name)
            setattr(module, name, value)
            undo.append(functools.partial(setattr, module, name, old))

    def restore() -> None:
        for step in reversed(undo):
            step()

    return restore


def _locomo(
    loaded: list[Any], wanted: Callable[[str], bool]
) -> tuple[int, float, dict[int, float]]:
    from bench_locomo import morphz_ranker

    recalls: list[tuple[int, float]] = []
    for conv, context_id, dia_of in loaded:
        if not wanted(conv.sample_id):
            continue
        rank = morphz_ranker(context_id, dia_of)
        for question, category, evidence in conv.questions:
            ranked = rank(question)[:10]
            recalls.append((category, len(evidence & set(ranked)) / len(evidence)))
            PER_QUERY.setdefault("locomo", []).append(
                (conv.sample_id, question, len(evidence & set(ranked)) / len(evidence))
            )
    per = {
        c: statistics.mean(r for k, r in recalls if k == c) for c in sorted({c for c, _ in recalls})
    }
    return len(recalls), statistics.mean(r for _, r in recalls), per


PER_QUERY: dict[str, list[Any]] = {}


def _group(group: Any) -> tuple[float, float, float]:
    import bench_relevance

    owns = group.own or [None] * len(group.queries)
    scores = [
        bench_relevance.metrics(
            [u for u in bench_relevance.morphz_ranking(group, q) if u != own], labels
        )
        for (q, labels), own in zip(group.queries, owns, strict=True)
    ]
    PER_QUERY[group.name] = [(q, s[0]) for (q, _), s in zip(group.queries, scores, strict=True)]
    return tuple(statistics.mean(s[i] for s in scores) for i in range(3))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("configs", nargs="+", choices=sorted(CONFIGS))
    parser.add_argument("--fresh", action="store_true", help="load everything again")
    parser.add_argument("--held-out", action="store_true", help="also LoCoMo's other three")
    parser.add_argument(
        "--groups",
        default="statebench",
        help="relevance groups (comma list; statebench-dev: STATE-Bench's development queries)",
    )
    args = parser.parse_args()
    setup_django(fresh=args.fresh)
    started = time.perf_counter()
    loaded, groups = _load(args.fresh)
    groups += [_statebench_dev(g) for g in groups if g.name == "statebench"]
    wanted_groups = [g for g in groups if g.name in set(args.groups.split(","))]
    print(f"loaded in {time.perf_counter() - started:.1f} s")
    conversational = [c for _, c, _ in loaded] + list(dict.fromkeys(g.context_id for g in groups))
    for name in args.configs:
        began = time.perf_counter()
        undo = _apply(CONFIGS[name])
        try:
            _reindex_messages(conversational)
            if "embed" in CONFIGS[name]:
                _reembed(conversational, CONFIGS[name]["embed"])
            n, dev, per = _locomo(loaded, lambda s: s in DEV)
            line = f"{name:24} dev {dev:.3f} ({n})"
            line += " [" + " ".join(f"{c}:{r:.3f}" for c, r in per.items()) + "]"
            if args.held_out:
                n, rest, per = _locomo(loaded, lambda s: s not in DEV)
                line += f" held-out {rest:.3f} ({n})"
                line += " [" + " ".join(f"{c}:{r:.3f}" for c, r in per.items()) + "]"
            for group in wanted_groups:
                mrr, ndcg, recall = _group(group)
                line += f" {group.name} {mrr:.3f}/{ndcg:.3f}/{recall:.3f}"
            print(f"{line} ({time.perf_counter() - began:.0f} s)", flush=True)
            if os.environ.get("DUMP"):
                import json

                with open(f"{os.environ['DUMP']}-{name}.json", "w") as out:
                    json.dump(PER_QUERY, out)
            PER_QUERY.clear()
        finally:
            undo()
            if "embed" in CONFIGS[name]:
                _reembed(conversational, None)
    _reindex_messages(conversational)  # the code's own rule again


if __name__ == "__main__":
    main()
