"""Connection flood (RELIABILITY.md): `--connections` connections that never send a byte,
opened as fast as this process can, against a server whose descriptor limit is
`--server-fds` (so the flood is several times what it can hold), while a client with a
token asks for its context every `--every` seconds.

    .venv/bin/python -m reliability.flood [--connections 20000] [--server-fds 4096]

The server keeps its connections below its limit by closing those that waited longest
for a request (morphz/http_protocol.py); the token client must be served throughout (target:
every request answered 200). Exits non-zero otherwise.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections import deque
from typing import Any

import httpx

from reliability.clients import api, latencies_ms, load, raise_own_descriptor_limit, summary
from reliability.stack import Stack, exit_on_sigterm


def flood(stack: Stack, total: int, hold: int, stop: threading.Event) -> dict[str, Any]:
    """Open `total` idle connections, holding at most `hold` at once (this process's own
    descriptors); counts refused connections."""
    held: deque[socket.socket] = deque()
    opened = refused = 0
    began = time.monotonic()
    while opened < total and not stop.is_set():
        if len(held) >= hold:
            held.popleft().close()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(5)
        try:
            sock.connect(("127.0.0.1", stack.port))
        except OSError:
            refused += 1
            sock.close()
            continue
        held.append(sock)
        opened += 1
    seconds = time.monotonic() - began
    for sock in held:
        sock.close()
    return {"opened": opened, "refused_or_timed_out": refused, "seconds": round(seconds, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connections", type=int, default=20_000)
    parser.add_argument("--server-fds", type=int, default=4096)
    parser.add_argument("--every", type=float, default=0.2)
    args = parser.parse_args()
    exit_on_sigterm()
    own = raise_own_descriptor_limit()
    began = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with Stack(fd_limit=args.server_fds) as stack:
        token = stack.create_context("flooded")
        http = api(stack, token, "flooded")
        http.timeout = httpx.Timeout(10)
        quiet = latencies_ms(http, "", 30)
        stop = threading.Event()
        outcome: dict[str, Any] = {}

        def run() -> None:
            outcome.update(flood(stack, args.connections, max(100, own - 200), stop))

        flooder = threading.Thread(target=run)
        flooder.start()
        during: list[float] = []
        while flooder.is_alive():
            during += latencies_ms(http, "", 1, pause=args.every)
        flooder.join()
        result = {
            "date": began,
            "load": load(),
            "server_descriptor_limit": args.server_fds,
            "flood": outcome,
            "token_client_quiet": summary(quiet),
            "token_client_during_flood": summary(during),
        }
    print(json.dumps(result, indent=2))
    ok = result["token_client_during_flood"].get("failed", 1) == 0 and bool(during)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
