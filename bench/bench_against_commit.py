"""The single-server path against an earlier commit, in one run (R68: no replica configured
must cost what it cost before).

    .venv/bin/python bench/bench_against_commit.py BASE_COMMIT [--samples 300]

Exports BASE_COMMIT's tree (`git archive`, into a temporary folder: no worktree or branch
is touched) and serves it beside this checkout, both with `uvicorn morphz.asgi:application`
on the same fresh PostgreSQL (reliability.stack), no replica configured. Then, in blocks of
10 alternating between the two servers over keep-alive HTTP: a frame read, a search and a
commit. Prints each p50 of this checkout / the base's (1.0: the same cost).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from common import serve_checkout  # noqa: E402

from reliability.stack import Stack, exit_on_sigterm  # noqa: E402

SLUG = "ab"


def export(commit: str) -> Path:
    target = Path(tempfile.mkdtemp(prefix="mz-base-"))
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def block(client: httpx.Client, base: str, start: int, times: dict[str, list[float]]) -> None:
    url = f"{base}/api/v1/contexts/{SLUG}/"
    for i in range(start, start + 10):
        requests = {
            "frame": ("GET", f"{url}frames/f{i % 100}/", {"params": {}}),
            "search": ("GET", f"{url}search/", {"params": {"q": f"topic {i % 7}"}}),
            "commit": (
                "POST",
                f"{url}transactions/",
                {"json": {"ops": [{"op": "derive", "id": f"n-{base[-5:]}-{i}", "body": {}}]}},
            ),
        }
        for kind, (method, target, extra) in requests.items():
            started = time.perf_counter()
            response = client.request(method, target, **extra)  # type: ignore[arg-type]
            times[kind].append((time.perf_counter() - started) * 1000)
            assert response.status_code in (200, 201), response.text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("base")
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    exit_on_sigterm()
    tree = export(args.base)
    servers: list[subprocess.Popen[bytes]] = []
    try:
        with Stack() as stack:
            token = stack.create_context(SLUG, "--capacity-tokens", "100000000")
            headers = {"Authorization": f"Bearer {token}"}
            ops = [
                {"op": "derive", "id": f"f{i}", "body": {"t": f"topic {i % 7}"}} for i in range(100)
            ]
            httpx.post(
                f"{stack.base}/api/v1/contexts/{SLUG}/transactions/",
                json={"ops": ops},
                headers=headers,
                timeout=60,
            ).raise_for_status()
            stack.stop_server()
            env = {**stack.env, "PYTHONPATH": ""}
            here, here_base = serve_checkout(ROOT, env, stack.root / "here.log", 90)
            base, base_base = serve_checkout(tree, env, stack.root / "base.log", 90)
            servers += [here, base]
            bases = {"this": here_base, "base": base_base}
            times: dict[str, dict[str, list[float]]] = {
                name: {"frame": [], "search": [], "commit": []} for name in bases
            }
            clients = {name: httpx.Client(headers=headers, timeout=30) for name in bases}
            warm: dict[str, dict[str, list[float]]] = {
                name: {"frame": [], "search": [], "commit": []} for name in bases
            }
            for name, url in bases.items():
                block(clients[name], url, 0, warm[name])
            for n in range(max(1, args.samples // 10)):
                for name, url in bases.items():
                    block(clients[name], url, 10 * (n + 1), times[name])
            p50 = {
                name: {k: statistics.median(v) for k, v in kinds.items()}
                for name, kinds in times.items()
            }
            result = {
                "base_commit": args.base,
                "p50_ms": p50,
                "this_over_base_p50": {
                    k: round(p50["this"][k] / p50["base"][k], 3)
                    for k in ("frame", "search", "commit")
                },
                "load": os.getloadavg(),
            }
            for client in clients.values():
                client.close()
            for proc in servers:
                proc.terminate()
                proc.wait(20)
    finally:
        shutil.rmtree(tree, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
