"""Every benchmark as ratios, at three history sizes: the scaling table.

    .venv/bin/python bench/run_all.py                 # 10k, 100k, 1M history events
    .venv/bin/python bench/run_all.py --quick         # 10k and 100k, fewer samples
    .venv/bin/python bench/run_all.py --sizes 10000 1000000

Machines differ by 2-3x from run to run, so every figure is printed next to its baseline
measured in the same run, as a ratio with its target; absolute figures are context only.
Two contexts grow through the sizes, `scale` (500 frames and 300 active observations, read
by compile) and `commits` (where every commit lands): history events (retired observations,
written in bulk by SQL: seeding, not the engine) are added up to each size, then every
figure is measured (the recall graph has a context of its own):

- commit: the first worked example's transaction (docs/design.md) in-process, in turn with the same rows
  written by hand-written SQL (one psycopg transaction each): ratio <= 1.5;
- HTTP commit: the same transaction over keep-alive HTTP (the served app, morphz.asgi under
  uvicorn, one worker), in turn with the in-process commits: ratio of the p50s <= 2, sent
  with `urllib3` (the client that adds least); the same sent with `httpx` (the Python
  client's library) is printed beside it, to read how much a client adds;
- per-context throughput: 8 writer threads committing on one context, against PostgreSQL
  doing the same row lock, inserts and commit from 8 pgbench clients (a PL/pgSQL function,
  no Python in between), both connected before their clock starts; the medians of 3 (5)
  rounds in turn after a warm-up: ratio >= 0.8;
- compile: compile_active_context (500 frames, 300 active observations), in turn with plain
  queries fetching the same rows: ratio <= 2; and in turn with compile of `scale-small`
  (the same live rows, its history held at the smallest size): <= 1.5 (flat in history);
- recall: the last page of a depth-4 recall in pages of 128 on a 5,000-node graph with cycles
  and a hub, against its first page: ratio <= 2;
- search: the STATE-Bench test tasks' questions (and their two most distinctive words) in
  `search`, whose history is copies of its STATE-Bench documents (so every query word
  recurs through it), in turn with the same search in `search-small` (the same documents,
  history at the smallest size): p50 ratio <= 1.5, p95 printed (`bench/scale_search.py`);
- history: a frame read as of half the context's commits back in turn with the present
  read (<= 5);
- bulk append: the STATE-Bench train trajectories (100, or all 300 in a full run) appended
  over HTTP by one client to `appends` (its history grown like the others), in blocks of 500
  events sent alternately one request per event and as one `{"events": [...]}` request:
  events/s of the bulk blocks against the single ones, ratio >= 10 (not run, and said so,
  without the data set).

The load average is printed before and after: the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_bench_all")

from bench_engine import bench_throughput, seed_frames
from bench_history import as_of_and_present
from bench_http import DATA, load_trajectories
from bench_servers import interleaved_commits
from common import ROOT, grow_history, load_average, setup_django, stop_process, wait_ready
from pg_limit import postgres_limit
from scale_search import grow_search_history, search_against_bases, seed_search

from morphz.devserver import free_port, uvicorn_command

GRAPH_NODES = 5_000


class Table:
    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.rows: dict[str, dict[int, str]] = {}
        self.targets: dict[str, str] = {}

    def put(self, figure: str, size: int, text: str, target: str) -> None:
        self.rows.setdefault(figure, {})[size] = text
        self.targets[figure] = target
        print(f"  {figure} @ {size:,}: {text}  (target {target})", flush=True)

    def ratio(
        self, figure: str, size: int, value: float, base: float, unit: str, target: str
    ) -> None:
        ratio = value / base if base else float("nan")
        mark = ""
        if target != "-":  # "-": printed for reading beside a figure, no target of its own
            op, bound = target.split(" ", 1)
            ok = ratio <= float(bound) if op == "<=" else ratio >= float(bound)
            mark = "" if ok else " **missed**"
        self.put(figure, size, f"{ratio:.2f}x ({value:.2f} / {base:.2f} {unit}){mark}", target)

    def print(self) -> None:
        head = " | ".join(f"{s:,} events" for s in self.sizes)
        print(f"\n| figure (ratio: measured / baseline) | {head} | target |")
        print("| --- | " + " | ".join("---" for _ in self.sizes) + " | --- |")
        for figure, cells in self.rows.items():
            row = " | ".join(cells.get(s, "not run") for s in self.sizes)
            print(f"| {figure} | {row} | {self.targets[figure]} |")


def p50(samples: list[float]) -> float:
    return statistics.median(samples)


def history_size(context_id: int) -> int:
    from memory.models import Event

    return Event.objects.filter(context_id=context_id).count()


# -- compile against plain queries -----------------------------------------------------------

PLAIN_COMPILE = [
    "SELECT frame_id, revision, status, protected, body, sources, token_estimate, "
    "retire_due_tick, retire_requested_tick, retire_reason FROM memory_frame "
    "WHERE context_id = %s AND status <> 'retired' ORDER BY created_version, frame_id",
    "SELECT seq, kind, thread, content, token_estimate, request_state FROM memory_event "
    "WHERE context_id = %s AND active ORDER BY seq",
    "SELECT seq, thread, payload FROM memory_event "
    "WHERE context_id = %s AND request_state = 'open' AND kind = 'action' ORDER BY seq",
    "SELECT s.frame_id, r.name, o.frame_id FROM memory_relation r "
    "JOIN memory_frame s ON s.id = r.subject_id JOIN memory_frame o ON o.id = r.object_id "
    "WHERE r.context_id = %s AND r.removed_version IS NULL AND s.status <> 'retired' "
    "AND o.status <> 'retired' ORDER BY r.id",
]


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - began) * 1000)
    return samples


def compile_vs_plain(context_id: int, small_id: int, repeat: int) -> tuple[float, float, float]:
    """p50s of compile, of the plain queries of the same rows, and of compile of a context
    with the same live rows and the smallest history, all interleaved (same machine)."""
    from django.db import connection

    from memory.models import Context
    from memory.timeline.compile import compile_active_context

    def plain() -> None:
        with connection.cursor() as cur:
            for sql in PLAIN_COMPILE:
                cur.execute(sql, [context_id])
                cur.fetchall()

    def compiled(pk: int) -> Callable[[], Any]:
        return lambda: compile_active_context(Context.objects.get(pk=pk))

    kinds = [compiled(context_id), plain, compiled(small_id)]
    samples: list[list[float]] = [[] for _ in kinds]
    for kind in kinds:
        kind()
    for _ in range(repeat):
        for kind, into in zip(kinds, samples, strict=True):
            into += timed(kind, 1)
    big, bare, small = (p50(s) for s in samples)
    return big, bare, small


# -- recall pages ------------------------------------------------------------------------------


def build_graph(context_id: int, nodes: int) -> None:
    """g0 is a hub related to ~70 frames, each of those related to ~70 more; every frame
    points back at the hub and at a random other frame (cycles), some cite events."""
    from memory.tx.engine import submit_transaction

    rng = random.Random(16)
    ops: list[dict[str, Any]] = [{"op": "derive", "id": "g0", "from": [], "body": {"n": "0"}}]
    fan = 70
    for i in range(1, nodes):
        ops.append({"op": "derive", "id": f"g{i}", "from": [], "body": {"n": str(i)}})
    relations = set()
    for i in range(1, nodes):
        parent = 0 if i <= fan else 1 + (i - fan - 1) % fan
        relations.add((f"g{parent}", "has", f"g{i}"))
        relations.add((f"g{i}", "back", "g0"))
        other = rng.randrange(nodes)
        if other != i:
            relations.add((f"g{i}", "see", f"g{other}"))
    ops += [{"op": "relate", "subject": s, "name": n, "object": o} for s, n, o in relations]
    for start in range(0, len(ops), 500):
        submit_transaction(
            context_id,
            data={"base_version": None, "reason": "graph", "ops": ops[start : start + 500]},
        )


def recall_first_and_last(context_id: int, repeat: int) -> tuple[float, float, int]:
    from memory.recall import walk
    from memory.recall.graph import recall

    params: dict[str, Any] = {"frame_id": "g0", "depth": 4, "max_nodes": 128}
    firsts, lasts, pages = [], [], 0
    for _ in range(repeat):
        walk.forget_all()
        began = time.perf_counter()
        page = recall(context_id, **params)
        firsts.append((time.perf_counter() - began) * 1000)
        pages = 1
        last = 0.0
        while page["next_cursor"]:
            began = time.perf_counter()
            page = recall(context_id, cursor=page["next_cursor"], **params)
            last = (time.perf_counter() - began) * 1000
            pages += 1
        lasts.append(last)
    return p50(firsts), p50(lasts), pages


# -- bulk append against single appends ---------------------------------------------------------

APPEND_BLOCK = 500


def appends_bulk_and_single(
    url: str, slug: str, token: str, events: list[dict[str, Any]]
) -> tuple[float, float]:
    """events/s of bulk and of single appends over HTTP (one keep-alive client), in turn:
    the events in blocks of APPEND_BLOCK, sent alternately one request per event and as one
    bulk request, so both follow the machine's speed of the same minute."""
    sys.path.insert(0, str(ROOT / "client"))
    from morphz_client import MorphzClient

    spent = {True: 0.0, False: 0.0}
    sent = {True: 0, False: 0}
    with MorphzClient(url, token, context=slug, timeout=120) as client:
        client.context()
        client.append_event(**events[0])  # warm-up of both paths, not measured
        client.append_events(events[1:3])  # type: ignore[arg-type]
        for i, start in enumerate(range(0, len(events), APPEND_BLOCK)):
            block, bulk = events[start : start + APPEND_BLOCK], i % 2 == 1
            began = time.perf_counter()
            if bulk:
                client.append_events(block, batch=APPEND_BLOCK)  # type: ignore[arg-type]
            else:
                for event in block:
                    client.append_event(**event)
            spent[bulk] += time.perf_counter() - began
            sent[bulk] += len(block)
    return sent[True] / spent[True], sent[False] / spent[False]


# -- the run -----------------------------------------------------------------------------------


def seed(sizes: list[int], quick: bool) -> dict[str, Any]:
    """The contexts every size measures, and the token of `commits`."""
    from memory.contexts import create_context, issue_token
    from memory.timeline.events import append_event

    began = time.perf_counter()
    # compile reads `scale` (500 frames, 300 active observations, a growing history) and,
    # interleaved, `scale-small` (the same live rows, its history held at the first size)
    made: dict[str, Any] = {}
    for slug in ("scale", "scale-small"):
        made[slug] = create_context(slug, capacity_tokens=2_000_000_000)
        seed_frames(made[slug].pk, 500)
        for i in range(300):
            append_event(
                made[slug].pk, kind="tool_result", content=f"observation {i}: " + "ok " * 40
            )
    grow_history(made["scale-small"].pk, max(0, sizes[0] - history_size(made["scale-small"].pk)))
    # commits land here (each adds frames), with the same growing history
    made["commits"] = create_context("commits", capacity_tokens=2_000_000_000)
    made["token"] = issue_token(made["commits"], name="bench").raw
    # bulk and single appends land here, with the same growing history
    made["appends"] = create_context("appends", capacity_tokens=2_000_000_000)
    made["appends_token"] = issue_token(made["appends"], name="bench").raw
    made["graph"] = create_context("graph", capacity_tokens=2_000_000_000)
    build_graph(made["graph"].pk, GRAPH_NODES)
    if DATA.is_dir():
        made.update(seed_search(100 if quick else None))
        grow_search_history(
            made["search-small"].pk,
            max(0, sizes[0] - history_size(made["search-small"].pk)),
            made["search_originals"],
        )
    print(f"seeded in {time.perf_counter() - began:.0f} s", flush=True)
    return made


def measure(table: Table, size: int, made: dict[str, Any], url: str, quick: bool) -> None:
    """Every figure at one history size."""
    n = 40 if quick else 150
    per_writer = 40 if quick else 60
    first = table.sizes[0]
    commits = made["commits"]
    paired = interleaved_commits(url or None, "commits", commits.pk, made["token"], n, False, True)
    engine = paired["in-process"]
    table.ratio("commit p50, engine / hand-written SQL, in turn", size, p50(engine),
                p50(paired["sql"]), "ms", "<= 1.5")  # fmt: skip
    if url:
        table.ratio("commit p50, HTTP / in-process, in turn", size, p50(paired["http"]),
                    p50(engine), "ms", "<= 2")  # fmt: skip
        table.ratio("  the same over httpx (the Python client's library) / in-process", size,
                    p50(paired["httpx"]), p50(engine), "ms", "-")  # fmt: skip
    engine_rate, limit = throughput_against_limit(commits.pk, size, per_writer, 3 if quick else 5)
    table.ratio("commits/s on one context, 8 writers: engine / PostgreSQL alone",
                size, engine_rate, limit, "/s", ">= 0.8")  # fmt: skip
    big, bare, small = compile_vs_plain(made["scale"].pk, made["scale-small"].pk,
                                        15 if quick else 50)  # fmt: skip
    table.ratio("compile p50 / plain queries of the same rows, in turn", size, big, bare,
                "ms", "<= 2")  # fmt: skip
    table.ratio(f"compile p50 / compile at {first:,} events, in turn", size, big, small,
                "ms", "<= 1.5")  # fmt: skip
    first_page, last, pages = recall_first_and_last(made["graph"].pk, 2 if quick else 5)
    table.ratio(f"recall last page / first page ({GRAPH_NODES:,} nodes, depth 4, "
                f"{pages} pages of 128)", size, last, first_page, "ms", "<= 2")  # fmt: skip
    search_rows(table, size, made, quick)
    history_rows(table, size, commits.pk, quick)
    appends = "events/s appended over HTTP: bulk / single, in turn (STATE-Bench)"
    if not url:
        return
    if not DATA.is_dir():
        table.put(appends, size, f"not run: no STATE-Bench trajectories at {DATA}", ">= 10")
        return
    events = [e for trajectory in load_trajectories(100 if quick else None) for e in trajectory]
    bulk, single = appends_bulk_and_single(url, "appends", made["appends_token"], events)
    table.ratio(appends, size, bulk, single, "/s", ">= 10")


def search_rows(table: Table, size: int, made: dict[str, Any], quick: bool) -> None:
    """Search against the same search with the smallest history, its history made of the
    same documents again (`bench/scale_search.py`): p50 with its target, p95 to read."""
    flat = f"search p50 / search at {table.sizes[0]:,} events, in turn (history recurring)"
    tail = f"  the same at p95 / p95 at {table.sizes[0]:,} events"
    if "search" not in made:
        table.put(flat, size, f"not run: no STATE-Bench trajectories at {DATA}", "<= 1.5")
        return
    got = search_against_bases(made["search"].pk, made["search-small"].pk, 1 if quick else 2)
    table.ratio(flat, size, got["search"][0], got["small"][0], "ms", "<= 1.5")
    table.ratio(tail, size, got["search"][1], got["small"][1], "ms", "-")


def history_rows(table: Table, size: int, context_id: int, quick: bool) -> None:
    """A frame read as of half the context's commits back, in turn with the present read.
    (A fork against a bare SQL copy stays bench/bench_history.py's: that copy, planned on
    statistics that have not seen the rows it has just copied, took 50-100 s at 100,000
    events against the fork's 6.6 s, so it is no baseline at these sizes.)"""
    from memory.models import Context, Frame

    context = Context.objects.get(pk=context_id)
    first = Frame.objects.filter(context_id=context_id).order_by("created_version", "id").first()
    assert first is not None
    past, now = as_of_and_present(context, context.version // 2, first.frame_id,
                                  100 if quick else 300)  # fmt: skip
    table.ratio("frame read as of half the commits back / the present read, in turn", size,
                p50(past), p50(now), "ms", "<= 5")  # fmt: skip


def throughput_against_limit(
    context_id: int, size: int, per_writer: int, rounds: int
) -> tuple[float, float]:
    """Median commits/s of the engine's 8 writers and of PostgreSQL alone (8 pgbench
    clients), measured in turn `rounds` times after a warm-up of each: one round lasts
    about a second, so a single pair would follow whatever else the machine did then."""
    # The same warm-up for both (240 commits each): the engine's first rounds on a new
    # connection pool ran 0.6-0.8x its later ones, and pgbench had twice its warm-up.
    bench_throughput([context_id], 8, 30, prefix=f"warm{size}-")
    postgres_limit(context_id, 8, 30)
    rates, limits = [], []
    for r in range(rounds):
        rates.append(bench_throughput([context_id], 8, per_writer, prefix=f"w{size}r{r}-"))
        limits.append(postgres_limit(context_id, 8, per_writer * 2))
    return statistics.median(rates), statistics.median(limits)


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "MORPHZ_THROTTLE_RATE": "100000000/min",
        "MORPHZ_INDEXER_IN_PROCESS": "0",
        "LOG_LEVEL": "WARNING",
    }
    server = subprocess.Popen(uvicorn_command(port), cwd=ROOT, env=env)
    wait_ready(url, server, 240)
    return server, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k and 100k, fewer samples")
    parser.add_argument("--sizes", type=int, nargs="*", help="history sizes (events)")
    parser.add_argument("--skip-http", action="store_true", help="no HTTP server")
    args = parser.parse_args()
    sizes = args.sizes or ([10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000])

    print(f"run_all ({'quick' if args.quick else 'full'}); {load_average()}", flush=True)
    setup_django(fresh=True)
    made = seed(sizes, args.quick)
    server, url = (None, "") if args.skip_http else start_server()
    table = Table(sizes)
    try:
        for size in sizes:
            began = time.perf_counter()
            for grown in (made["scale"], made["commits"], made["appends"]):
                missing = size - history_size(grown.pk)
                if missing > 0:
                    grow_history(grown.pk, missing)
            if "search" in made and (missing := size - history_size(made["search"].pk)) > 0:
                grow_search_history(made["search"].pk, missing, made["search_originals"])
            print(f"history of 'scale', 'commits', 'appends' and 'search' now {size:,} events "
                  f"({time.perf_counter() - began:.0f} s); {load_average()}", flush=True)  # fmt: skip
            measure(table, size, made, url, args.quick)
    finally:
        if server is not None:
            stop_process(server)
    table.print()
    print(f"\nafter the run: {load_average()}")


if __name__ == "__main__":
    main()
