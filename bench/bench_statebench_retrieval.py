"""Offline retrieval benchmark on STATE-Bench: Morphz's learned memory against
flat BM25 and vector retrieval over the raw train transcripts, same run, same queries.

    .venv/bin/python bench/bench_statebench_retrieval.py

Starts what it needs: the embedded PostgreSQL (bench database `morphz_bench_statebench`) and
uvicorn serving Morphz; learns each domain's context from its 100 train trajectories with
the offline learner (morphz_statebench, over REST), freezes it when the server can, and
times a fork per task when the server has forks. Then, for each of the 150 test tasks, the
opening message is the query and the top 3 learnings are scored: a learning scores the share
of the train trajectories it stands on (its sources, transitively; a raw transcript stands
on itself) whose `task_type` is the test task's (labels are read here, for scoring only).
hit@3: some learning of the three scores >= 0.5; precision@3: their mean score; MRR: 1 / the
rank of the first learning scoring >= 0.5. The baselines: `bm25s` over the transcripts, and
`wordllama` embeddings (its model ships inside the wheel) with cosine similarity, as the
the Mem0 reference agent retrieves. Ends with
`retrieval hit@3: morphz=0.xx bm25=0.yy vector=0.zz` (overall).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_bench_statebench")

from bench_http import start_server
from common import ROOT, load_average, new_context, setup_django, stop_process, wait_ready

from morphz.devserver import free_port

sys.path.insert(0, str(ROOT / "client"))
sys.path.insert(0, str(ROOT / "integrations" / "statebench"))

DATA = ROOT.parent / "shared" / "benchdata" / "state-bench"
TOP_K = 3


def task_info(domain: str) -> tuple[list[str], list[str], dict[str, dict[str, Any]]]:
    folder = DATA / "tasks" / domain
    splits = json.loads((folder / "splits.json").read_text())["splits"]
    tasks = {
        t: json.loads((folder / f"{t}.json").read_text()) for t in splits["train"] + splits["test"]
    }
    return splits["train"], splits["test"], tasks


Ranked = list[list[list[str]]]  # per query, per learning: the train task ids it stands on


def score_lists(ranked: Ranked, wanted: list[str], labels: dict[str, str]) -> dict[str, float]:
    """`ranked[i]`: the train task ids each of query i's top learnings stands on."""
    hits, precisions, reciprocal = [], [], []
    for stands_on_list, want in zip(ranked, wanted, strict=True):
        scores = [
            (sum(labels[t] == want for t in stands) / len(stands)) if stands else 0.0
            for stands in stands_on_list[:TOP_K]
        ]
        scores += [0.0] * (TOP_K - len(scores))
        hits.append(1.0 if max(scores) >= 0.5 else 0.0)
        precisions.append(sum(scores) / TOP_K)
        first = next((i for i, s in enumerate(scores) if s >= 0.5), None)
        reciprocal.append(0.0 if first is None else 1 / (first + 1))
    n = len(wanted)
    return {"hit": sum(hits) / n, "precision": sum(precisions) / n, "mrr": sum(reciprocal) / n}


def flat_baselines(
    transcripts: list[str],
) -> tuple[Callable[[str], list[int]], Callable[[str], list[int]]]:
    import bm25s
    import numpy as np
    import wordllama
    from wordllama import WordLlama

    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(transcripts, stopwords="en", show_progress=False), show_progress=False
    )

    def bm25(query: str) -> list[int]:
        docs, _ = retriever.retrieve(
            bm25s.tokenize([query], stopwords="en", show_progress=False),
            k=TOP_K,
            show_progress=False,
        )
        return [int(i) for i in docs[0]]

    # The weights ship inside the wheel: load them from the package folder, offline.
    model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    matrix = np.asarray(model.embed(transcripts, norm=True))

    def vector(query: str) -> list[int]:
        q = np.asarray(model.embed([query], norm=True))[0]
        return [int(i) for i in np.argsort(-(matrix @ q))[:TOP_K]]

    return bm25, vector


def stands_on(frame_id: str, frames: dict[str, dict[str, Any]], events: dict[str, str]) -> set[str]:
    """The train task ids a frame stands on through its sources, transitively."""
    out: set[str] = set()
    stack, seen = [frame_id], set()
    while stack:
        ref = stack.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if ref.startswith("@e"):
            if ref in events:
                out.add(events[ref])
        elif ref in frames:
            stack.extend(frames[ref].get("sources") or [])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domains", default="all")
    parser.add_argument("--units", choices=["all", "cases"], default="all")
    args = parser.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"STATE-Bench data not found at {DATA}")
    from morphz_client import MorphzClient, MorphzError
    from morphz_statebench.data import load_domain, parse_domains
    from morphz_statebench.learner import OfflineLearner, learn
    from morphz_statebench.retrieval import Retriever

    setup_django(fresh=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(port, workers=1, indexer_in_process=True)
    results: dict[str, dict[str, dict[str, float]]] = {}
    learn_seconds: list[float] = []
    fork_ms: list[float] = []
    totals: dict[str, list[tuple[Ranked, list[str], dict[str, str]]]] = {}
    try:
        wait_ready(url, server)
        print(f"uvicorn on {url}; {load_average()}")
        for domain in parse_domains(args.domains):
            train, test, tasks = task_info(domain)
            labels = {t: tasks[t]["task_type"] for t in train}
            dataset = load_domain(DATA, domain)
            _, token = new_context(f"sb-{domain.replace('_', '-')}")
            client = MorphzClient(url, token, timeout=120)
            report = learn(client, dataset, OfflineLearner())
            learn_seconds.append(report.seconds / report.trajectories)
            _wait_indexed(client)
            try:
                client._request("PATCH", client._ctx(), json={"frozen": True})
                frozen = True
            except MorphzError:
                frozen = False
            for _ in range(5):
                try:
                    began = time.perf_counter()
                    client._request("POST", client._ctx("forks/"), json={"at_version": 100})
                    fork_ms.append((time.perf_counter() - began) * 1000)
                except MorphzError:
                    break
            print(
                f"{domain}: learned {report.trajectories} trajectories in {report.seconds:.1f} s "
                f"(version {report.version}, tick {report.tick}, frozen {frozen})"
            )
            retriever = Retriever(client, units=args.units)
            queries = [tasks[t]["opening_message"] for t in test]
            wanted = [tasks[t]["task_type"] for t in test]
            morphz_ranked: Ranked = []
            for query in queries:
                learnings = retriever.retrieve(query, TOP_K)
                morphz_ranked.append(
                    [
                        sorted(stands_on(item.frame_id, retriever._frames, report.event_refs))
                        for item in learnings
                    ]
                )
            transcripts = [t.transcript() for t in dataset.trajectories]
            ids = [t.task_id for t in dataset.trajectories]
            bm25, vector = flat_baselines(transcripts)
            bm25_ranked = [[[ids[i]] for i in bm25(q)] for q in queries]
            vector_ranked = [[[ids[i]] for i in vector(q)] for q in queries]
            client.close()
            results[domain] = {}
            for name, ranked in (
                ("morphz", morphz_ranked),
                ("bm25", bm25_ranked),
                ("vector", vector_ranked),
            ):
                results[domain][name] = score_lists(ranked, wanted, labels)
                totals.setdefault(name, []).append((ranked, wanted, labels))
    finally:
        stop_process(server, 10)
    print()
    print(f"{'domain':20s} {'system':7s} {'hit@3':>6s} {'prec@3':>7s} {'MRR':>6s}")
    for domain, systems in results.items():
        for name, figures in systems.items():
            print(
                f"{domain:20s} {name:7s} {figures['hit']:6.2f} {figures['precision']:7.2f} "
                f"{figures['mrr']:6.2f}"
            )
    overall: dict[str, dict[str, float]] = {}
    for name, parts in totals.items():
        ranked_all: Ranked = []
        wanted_all: list[str] = []
        labels_all: dict[str, str] = {}
        for ranked, wanted, labels in parts:
            ranked_all += ranked
            wanted_all += wanted
            labels_all.update(labels)
        overall[name] = score_lists(ranked_all, wanted_all, labels_all)
        figures = overall[name]
        print(
            f"{'overall':20s} {name:7s} {figures['hit']:6.2f} {figures['precision']:7.2f} "
            f"{figures['mrr']:6.2f}"
        )
    print(
        f"learning: {statistics.median(learn_seconds) * 1000:.0f} ms per trajectory (median of "
        f"domains); fork of a learned context: "
        + (f"p50 {statistics.median(fork_ms):.0f} ms per task" if fork_ms else "not available")
        + f"; {load_average()}"
    )
    print(
        f"retrieval hit@3: morphz={overall['morphz']['hit']:.2f} "
        f"bm25={overall['bm25']['hit']:.2f} vector={overall['vector']['hit']:.2f}"
    )


def _wait_indexed(client: Any, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lag = client.search("case", type="frame", limit=1).get("lag") or {}
        if not lag.get("pending_intents"):
            return
        time.sleep(0.2)
    raise SystemExit("the search index did not catch up")


if __name__ == "__main__":
    main()
