"""Many workers in one run (R68, docs/scaling.md): the served application with several
worker processes sharing the Redis channel layer, several search indexers and a streaming
replica at once, under the reliability writers (RELIABILITY.md, "Many workers").

    .venv/bin/python -m reliability.many [--workers 3] [--indexers 2] [--writers 4]
        [--seconds 8] [--sockets 4] [--redis redis://127.0.0.1:6379/7]

Checked, each from outside the server:

- every acknowledged commit is there and nothing is half-written (`check_invariants`);
- live updates reach every explorer websocket whichever worker holds it: `--sockets`
  sockets (each new connection lands on whichever worker the kernel gives it) receive an
  update for every version the writers committed, whichever worker took the commit;
- a recall paged through fresh connections (so each page may be served by another worker,
  reading from the primary or the replica) returns every node once;
- the indexers together index everything (search `lag` reaches 0) and no read was a 5xx.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

import httpx
import websockets
from websockets.typing import Origin

from reliability.replication import Standby
from reliability.stack import REPO, Stack, exit_on_sigterm
from reliability.workload import Tally, check_invariants, seed, writer

SLUG = "many"
PASSWORD = "drill-password-not-secret"


def staff_session(base: str) -> str:
    """Log the drill's staff person in through the admin; their session cookie."""
    with httpx.Client(base_url=base, timeout=30) as http:
        http.get("/admin/login/")
        token = http.cookies["csrftoken"]
        http.post(
            "/admin/login/?next=/admin/",
            data={"username": "staff", "password": PASSWORD, "csrfmiddlewaretoken": token},
            headers={"Referer": f"{base}/admin/login/"},
        )
        return str(http.cookies["sessionid"])


async def listen(
    base: str, session: str, seen: list[set[int]], stop: threading.Event, errors: list[str]
) -> None:
    """One explorer socket on the context per set in `seen`, each adding the versions it
    is told of (a socket that fails is reported in `errors`)."""
    url = base.replace("http://", "ws://") + f"/ws/contexts/{SLUG}/"
    started = time.monotonic()

    async def one(index: int) -> None:
        try:
            async with websockets.connect(
                url, additional_headers={"Cookie": f"sessionid={session}"}, origin=Origin(base)
            ) as socket:
                while not stop.is_set():
                    try:
                        raw = await asyncio.wait_for(socket.recv(), 0.5)
                    except TimeoutError:
                        continue
                    message = json.loads(raw)
                    if message.get("type") == "transaction":
                        seen[index].add(int(message["version"]))
        except Exception as exc:
            errors.append(f"socket {index}: {exc!r} after {time.monotonic() - started:.1f} s")

    await asyncio.gather(*(one(i) for i in range(len(seen))))


def recall_across_connections(base: str, token: str) -> dict[str, Any]:
    """A hub and its 29 derived frames recalled 4 nodes a page, each page on a fresh
    connection."""
    headers = {"Authorization": f"Bearer {token}"}
    url = f"{base}/api/v1/contexts/{SLUG}/"
    ops: list[dict[str, Any]] = [{"op": "derive", "id": "chain-0", "body": {"n": "0"}}]
    ops += [
        {"op": "derive", "id": f"chain-{i}", "from": ["chain-0"], "body": {"n": str(i)}}
        for i in range(1, 30)
    ]
    httpx.post(url + "transactions/", json={"ops": ops}, headers=headers, timeout=60)
    nodes: list[str] = []
    cursor = None
    pages = 0
    while True:
        body: dict[str, Any] = {
            "frame_id": "chain-0",
            "depth": 1,
            "direction": "descendants",
            "max_nodes": 4,
        }
        if cursor:
            body["cursor"] = cursor
        with httpx.Client(headers=headers, timeout=30) as fresh:
            response = fresh.post(url + "recall/", json=body)
        response.raise_for_status()
        data = response.json()
        nodes += [n["id"] for n in data["nodes"]]
        pages += 1
        cursor = data.get("next_cursor")
        if not cursor:
            break
    expected = {f"chain-{i}" for i in range(30)}
    return {
        "pages": pages,
        "nodes": len(nodes),
        "every_node_once": sorted(nodes) == sorted(expected),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--indexers", type=int, default=2)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--sockets", type=int, default=4)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/7")
    args = parser.parse_args()
    exit_on_sigterm()
    standby: Standby | None = None
    indexers: list[subprocess.Popen[bytes]] = []
    result: dict[str, Any] = {"workers": args.workers, "indexers": args.indexers}
    stack = Stack(workers=args.workers)
    stack.env.update({"CHANNEL_LAYER_URL": args.redis, "DJANGO_SUPERUSER_PASSWORD": PASSWORD})
    with stack:
        try:
            token = stack.create_context(SLUG, "--capacity-tokens", "100000000")
            stack.manage(
                "createsuperuser",
                "--noinput",
                "--username",
                "staff",
                "--email",
                "staff@example.com",
            )
            seed(stack.base, token, SLUG)
            standby = Standby.clone(str(stack.root), stack.root / "standby", name="standby")
            stack.stop_server()
            stack.env["DATABASE_REPLICA_URLS"] = standby.url()
            stack.start_server()
            indexers = [
                subprocess.Popen(
                    [sys.executable, "manage.py", "run_indexer"],
                    cwd=REPO,
                    env=stack.env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                for _ in range(args.indexers)
            ]
            session = staff_session(stack.base)
            stop_sockets = threading.Event()
            told: list[set[int]] = [set() for _ in range(args.sockets)]
            socket_errors: list[str] = []
            listener = threading.Thread(
                target=lambda: asyncio.run(
                    listen(stack.base, session, told, stop_sockets, socket_errors)
                )
            )
            listener.start()
            time.sleep(2.0)  # every socket accepted and in its group
            tally, stop = Tally(), threading.Event()
            threads = [
                threading.Thread(
                    target=writer,
                    args=(stack.base, token, SLUG, w, 10**6, tally),
                    kwargs={"stop": stop},
                )
                for w in range(args.writers)
            ]
            # Before the writers: under them every page would meet a newer version (409
            # stale_cursor, as a cursor must).
            result["recall"] = recall_across_connections(stack.base, token)
            for t in threads:
                t.start()
            try:
                time.sleep(args.seconds)
            finally:
                stop.set()
                for t in threads:
                    t.join(120)
            acked = {ack.version for ack in tally.acks}
            # The last updates may still be in flight on a loaded machine: wait for them
            # (a bounded time), so a late one is not counted as lost.
            deadline = time.monotonic() + 30
            while any(acked - versions for versions in told) and time.monotonic() < deadline:
                time.sleep(0.2)
            stop_sockets.set()
            listener.join(30)
            result["acknowledged"] = len(acked)
            result["sockets_missing_updates"] = [len(acked - versions) for versions in told]
            result["socket_errors"] = socket_errors
            if socket_errors:
                result["server_log"] = (stack.root / "server.log").read_text()[-3000:]
            deadline = time.monotonic() + 120
            lag = None
            while time.monotonic() < deadline:
                search = httpx.get(
                    f"{stack.base}/api/v1/contexts/{SLUG}/search/",
                    params={"q": "writer"},
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=30,
                )
                lag = search.json().get("lag")
                if search.status_code == 200 and lag and lag["pending_intents"] == 0:
                    break
                time.sleep(0.5)
            result["search_lag_at_end"] = lag
            with stack.connect() as conn:
                result["problems"] = check_invariants(conn, SLUG, tally)
            result["server_errors"] = tally.server_errors[:20]
            result["gave_up"] = tally.gave_up
        finally:
            for process in indexers:
                process.terminate()
                process.wait(20)
            if standby is not None:
                standby.stop()
    print(json.dumps(result, indent=2, default=str))
    ok = (
        not result.get("problems")
        and not result.get("server_errors")
        and not result.get("socket_errors")
        and len(result.get("sockets_missing_updates", [])) == args.sockets
        and not any(result["sockets_missing_updates"])
        and result.get("recall", {}).get("every_node_once")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "morphz.settings")
    raise SystemExit(main())
