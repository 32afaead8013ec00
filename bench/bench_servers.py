"""HTTP stacks side by side: our bridge against well-kept servers and
adapters, in one run, on one database, one worker each.

    .venv/bin/python bench/bench_servers.py            # every stack
    .venv/bin/python bench/bench_servers.py --quick    # fewer requests
    .venv/bin/python bench/bench_servers.py --stacks uvicorn+onehop granian-asgi+a2wsgi

For each stack (bench/serving_apps.py names the applications) it starts the server, then:

- commit p50 over one keep-alive connection (the first worked example's transaction (docs/design.md) on
  fresh targets), next to the in-process commit p50 of the same transaction measured in
  this process in the same run: the ratio is the HTTP overhead (target <= 2x);
- append throughput: 4 parallel keep-alive clients, one context each, small events;
- resident memory of the server (its whole process tree) before and after 8 sequential
  GETs of a frame whose detail response is large (a ~7 MB body revised 4 times), and the
  largest resident size seen while they ran.

The load average is printed with the figures: the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_bench_servers")

from bench_engine import HandwrittenCommits
from common import (
    FIRST_TX,
    ROOT,
    load_average,
    new_context,
    percentile,
    prepare_targets,
    setup_django,
    stop_process,
    timed_threads,
    wait_ready,
)

from morphz.devserver import free_port

PY = sys.executable
SERVERS_CAPACITY = 500_000_000  # tokens: large enough that pressure never gates the run


def uvicorn(app: str) -> Callable[[int], list[str]]:
    def command(port: int) -> list[str]:
        return [
            PY, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
            "--lifespan", "off", "--no-access-log", "--log-level", "warning",
        ]  # fmt: skip

    return command


def granian(app: str, interface: str) -> Callable[[int], list[str]]:
    def command(port: int) -> list[str]:
        return [
            PY, "-m", "granian", "--interface", interface, "--host", "127.0.0.1",
            "--port", str(port), "--workers", "1", "--no-access-log", "--log-level", "warning",
            *(["--blocking-threads", "8"] if interface == "wsgi" else []),
            app,
        ]  # fmt: skip

    return command


STACKS: dict[str, Callable[[int], list[str]]] = {
    "uvicorn+onehop": uvicorn("serving_apps:onehop"),
    "uvicorn+a2wsgi": uvicorn("serving_apps:a2wsgi_app"),
    "uvicorn+django-asgi": uvicorn("serving_apps:django_asgi"),
    "granian-asgi+onehop": granian("serving_apps:onehop", "asgi"),
    "granian-asgi+a2wsgi": granian("serving_apps:a2wsgi_app", "asgi"),
    "granian-asgi+django-asgi": granian("serving_apps:django_asgi", "asgi"),
    "granian-wsgi (HTTP only)": granian("serving_apps:wsgi", "wsgi"),
}


def tree_rss_mb(pid: int) -> float:
    """Resident memory of `pid` and all its descendants, in MB (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            with open(f"/proc/{current}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def start(command: list[str]) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "bench"), str(ROOT)]),
        "MORPHZ_THROTTLE_RATE": "100000000/min",
        "MORPHZ_INDEXER_IN_PROCESS": "0",
        "LOG_LEVEL": "WARNING",
    }
    return subprocess.Popen(command, cwd=ROOT, env=env)


def interleaved_commits(
    url: str | None,
    slug: str,
    context_id: int,
    token: str,
    n: int,
    through_django: bool,
    handwritten: bool = False,
) -> dict[str, list[float]]:
    """The same transaction in turn in-process, through Django's request cycle without a
    server (optional), over keep-alive HTTP (when `url`) and as hand-written SQL (the same
    rows, `handwritten`), all on one context, so each kind sees the same machine load: the
    ratios are paired, not minutes apart.

    Over HTTP it is sent twice, with two clients: `http` with `urllib3` (what `requests`
    runs on; the server's cost with the least a client adds) and `httpx` (what the Python
    client `morphz_client` uses; ~0.4-1 ms more of client CPU per request, measured)."""
    import json

    import httpx
    import urllib3
    from django.core.handlers.wsgi import WSGIHandler

    from memory.models import Context
    from memory.tx.engine import submit_transaction
    from morphz.serving import run_wsgi

    kinds = ["in-process"] + (["django"] if through_django else [])
    kinds += ["http", "httpx"] if url else []
    prefix = f"x{time.monotonic_ns()}-"
    targets = prepare_targets(context_id, prefix, (n + 10) * len(kinds))
    sql = HandwrittenCommits(context_id, n + 10, prefix=f"s{prefix}") if handwritten else None
    kinds += ["sql"] if sql is not None else []
    app = WSGIHandler()
    base = Context.objects.get(pk=context_id).version
    samples: dict[str, list[float]] = {kind: [] for kind in kinds}
    path = f"/api/v1/contexts/{slug}/transactions/"
    headers = {"Authorization": f"Bearer {token}"}
    address = urllib3.util.parse_url(url or "http://unused")
    lean = urllib3.HTTPConnectionPool(
        address.host or "127.0.0.1", address.port, maxsize=1, timeout=60,
        headers={**headers, "Content-Type": "application/json"},
    )  # fmt: skip
    with lean, httpx.Client(base_url=url or "http://unused", headers=headers, timeout=60) as client:
        for i in range(n + 10):
            for kind in kinds:
                if kind == "sql":
                    assert sql is not None
                    elapsed = sql.commit(i)
                    if i >= 10:
                        samples[kind].append(elapsed)
                    continue
                k, seq = targets.pop()
                text = FIRST_TX.format(base=base, k=f"{prefix}{k}", seq=seq)
                began = time.perf_counter()
                if kind == "in-process":
                    base = int(submit_transaction(context_id, text=text).receipt["version"])
                elif kind == "django":
                    body = json.dumps({"text": text}).encode()
                    status, _, spooled, _size = run_wsgi(app, _environ(path, token, body))
                    with spooled:
                        content = spooled.read()
                    if status != 201:
                        raise RuntimeError(f"commit failed: {status} {content[:300]!r}")
                    base = int(json.loads(content)["version"])
                elif kind == "http":
                    body = json.dumps({"text": text}).encode()
                    answer = lean.request("POST", path, body=body)
                    if answer.status != 201:
                        raise RuntimeError(f"commit failed: {answer.data[:300]!r}")
                    base = int(json.loads(answer.data)["version"])
                else:
                    response = client.post(path, json={"text": text})
                    if response.status_code != 201:
                        raise RuntimeError(f"commit failed: {response.text[:300]}")
                    base = int(response.json()["version"])
                if i >= 10:  # the first ones warm connections and caches
                    samples[kind].append((time.perf_counter() - began) * 1000)
    if sql is not None:
        sql.close()
    return samples


def _environ(path: str, token: str, body: bytes) -> dict[str, Any]:
    from io import BytesIO

    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
    }


def http_appends(url: str, prefix: str, per_client: int, clients: int = 4) -> float:
    import httpx

    slugs = [f"{prefix}-{i}" for i in range(clients)]
    tokens = {slug: new_context(slug, SERVERS_CAPACITY)[1] for slug in slugs}
    barrier = threading.Barrier(clients + 1)
    errors: list[str] = []

    def loop(slug: str) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {tokens[slug]}"}) as c:
            c.get(f"/api/v1/contexts/{slug}/")
            barrier.wait()
            for i in range(per_client):
                event = {"kind": "tool_result", "content": f"step {i}: 12 passed, 0 failed " * 8}
                response = c.post(f"/api/v1/contexts/{slug}/events/", json=event)
                if response.status_code != 201:
                    errors.append(f"{response.status_code} {response.text[:200]}")
                    return

    threads = [threading.Thread(target=loop, args=(slug,)) for slug in slugs]
    elapsed = timed_threads(threads, barrier)
    if errors:
        raise RuntimeError(f"append failed: {errors[0]}")
    return clients * per_client / elapsed


def large_frame(slug: str, body_chars: int, revisions: int) -> str:
    """A frame whose body is ~body_chars characters, revised `revisions` times; its token."""
    from memory.tx.engine import submit_transaction

    context_id, token = new_context(slug, SERVERS_CAPACITY)
    text = "日志 line of a long build output; " * (body_chars // 32)
    ops: list[dict[str, Any]] = [{"op": "derive", "id": "big", "from": [], "body": {"log": text}}]
    submit_transaction(context_id, data={"base_version": None, "reason": "big", "ops": ops})
    for r in range(revisions):
        body = {"log": f"{r} " + text}
        submit_transaction(
            context_id,
            data={
                "base_version": None,
                "reason": "revise",
                "ops": [{"op": "revise", "id": "big", "body": body}],
            },
        )
    return token


def http_large_responses(
    url: str, server_pid: int, slug: str, token: str, n: int
) -> tuple[float, float, float, int]:
    """(rss before, peak during, after) in MB, and the response size in bytes."""
    import httpx

    before = tree_rss_mb(server_pid)
    peak = before
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss_mb(server_pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    size = 0
    try:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as client:
            for _ in range(n):
                response = client.get(f"/api/v1/contexts/{slug}/frames/big/", timeout=120)
                if response.status_code != 200:
                    raise RuntimeError(f"GET failed: {response.status_code} {response.text[:200]}")
                size = len(response.content)
    finally:
        done.set()
        sampler.join()
    time.sleep(0.5)
    return before, peak, tree_rss_mb(server_pid), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests")
    parser.add_argument("--stacks", nargs="*", choices=sorted(STACKS), default=list(STACKS))
    parser.add_argument("--big-chars", type=int, default=7_000_000)
    parser.add_argument("--no-large", action="store_true", help="skip the large responses")
    args = parser.parse_args()
    commits = 60 if args.quick else 300
    appends = 100 if args.quick else 400
    gets = 8

    setup_django(fresh=True)
    print(f"HTTP stacks, one worker each; {load_average()}")
    context_id, token = new_context("split", SERVERS_CAPACITY)
    split = interleaved_commits(None, "split", context_id, token, commits, through_django=True)
    inproc_p50 = statistics.median(split["in-process"])
    django_p50 = statistics.median(split["django"])
    print(
        f"commit p50 in-process {inproc_p50:.2f} ms; through Django's request cycle in this "
        f"process, no server, {django_p50:.2f} ms ({django_p50 / inproc_p50:.2f}x), in turn"
    )
    big_token = "" if args.no_large else large_frame("big", args.big_chars, 4)
    rows = []
    response_mb = 0.0
    for index, name in enumerate(args.stacks):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = start(STACKS[name](port))
        try:
            wait_ready(url, server, 240)
            slug = f"commits-{index}"
            context_id, token = new_context(slug, SERVERS_CAPACITY)
            paired = interleaved_commits(url, slug, context_id, token, commits, False)
            samples, inproc = paired["http"], paired["in-process"]
            rate = http_appends(url, f"appends-{index}", appends)
            rss = (
                (0.0, 0.0, 0.0, 0)
                if args.no_large
                else http_large_responses(url, server.pid, "big", big_token, gets)
            )
        except RuntimeError as error:
            print(f"{name}: failed: {error}")
            continue
        finally:
            stop_process(server)
        p50 = statistics.median(samples)
        row = (
            f"| {name} | {p50:.2f} / {percentile(samples, 99):.2f} ms | "
            f"{p50 / statistics.median(inproc):.2f}x ({statistics.median(inproc):.2f} ms) "
            f"| {rate:.0f}/s | {rss[0]:.0f} → {rss[1]:.0f} → {rss[2]:.0f} MB |"
        )
        rows.append(row)
        print(row, flush=True)
        response_mb = rss[3] / 1e6
    print()
    print(
        f"in-process commit p50 {inproc_p50:.2f} ms; large response {response_mb:.0f} MB x {gets}"
    )
    print(
        "| stack | HTTP commit p50 / p99 | ratio to in-process in turn (target <= 2x) | appends, "
        "4 clients x 4 contexts | RSS before → peak → after 8 large GETs |"
    )
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print(row)
    print(f"after the run: {load_average()}")


if __name__ == "__main__":
    main()
