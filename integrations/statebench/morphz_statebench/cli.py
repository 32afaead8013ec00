"""`python -m morphz_statebench COMMAND`: learn, run, scripted, audit.

    learn     build (or reuse) each domain's learned context and freeze it with a manifest
    run       learn, then run the test split through STATE-Bench's own run_batch and
              scoring with a Morphz agent, audit, print passes out of 150 with cost
    scripted  offline: replay train tasks through the real orchestrator and the Morphz
              agent with a scripted model and user; checks the tool results are identical
    audit     check a results folder against the learned contexts (see audit.py)

Environment (all optional unless said):
    MORPHZ_URL                 a running Morphz server; else one is started from MORPHZ_DIR
    MORPHZ_DIR                 the Morphz checkout (its .venv and manage.py), used to start
                               the server and create contexts (default: this checkout)
    MORPHZ_STATEBENCH_WORKDIR  contexts.json, agents/ and outputs (default ./morphz-statebench)
    MORPHZ_STATEBENCH_MODEL, MORPHZ_STATEBENCH_API_KEY (or OPENAI_API_KEY),
    MORPHZ_STATEBENCH_BASE_URL, MORPHZ_STATEBENCH_PRICE_IN / _PRICE_OUT
                               the model of the LLM learner and the full agent (models.py)
    STATE_BENCH_EVAL_* and STATE_BENCH_AGENT_*: the benchmark's own simulator, judge and
                               built-in agent client (its docs/setup); `run` passes them on.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from morphz_statebench.data import DOMAINS, load_domain, parse_domains
from morphz_statebench.learner import Learner, LLMLearner, OfflineLearner, learn
from morphz_statebench.manifest import (
    LearnedContext,
    freeze_with_manifest,
    load_contexts,
    save_context,
    workdir,
)

AGENT_CLASSES = {"full": "MorphzAgent", "retrieve": "MorphzRetrieveAgent", "none": None}
AGENTS_SHIM = """# Written by morphz_statebench: STATE-Bench loads --agent-class from ./agents/.
from morphz_statebench.agents import MorphzAgent, MorphzRetrieveAgent  # noqa: F401
"""
CLIENTS_SHIM = """# Written by morphz_statebench: STATE-Bench loads --agent-client-class from ./clients/.
from morphz_statebench.agents import MorphzModelClient  # noqa: F401
"""


def default_morphz_dir() -> Path | None:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "manage.py").exists() and (parent / "memory").is_dir():
            return parent
    env = os.environ.get("MORPHZ_DIR")
    return Path(env) if env else None


def _python(morphz_dir: Path) -> str:
    venv = morphz_dir / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def morphz_server(url: str | None, morphz_dir: Path | None) -> Iterator[str]:
    """The URL of a Morphz server: the one given, or one started from the checkout."""
    if url:
        yield url.rstrip("/")
        return
    if morphz_dir is None:
        raise SystemExit("set MORPHZ_URL, or MORPHZ_DIR to a Morphz checkout to start one")
    port = _free_port()
    env = {**os.environ, "PORT": str(port), "HOST": "127.0.0.1", "LOG_LEVEL": "WARNING"}
    env.setdefault("MORPHZ_THROTTLE_RATE", "1000000/min")
    subprocess.run(
        [_python(morphz_dir), "manage.py", "migrate", "--noinput"],
        cwd=morphz_dir,
        env=env,
        check=True,
    )
    server = subprocess.Popen([_python(morphz_dir), "manage.py", "serve"], cwd=morphz_dir, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if server.poll() is not None:
                raise SystemExit(f"the Morphz server exited with {server.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/api/v1/", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("the Morphz server did not answer in time")
            time.sleep(0.3)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()


def create_context(morphz_dir: Path, slug: str) -> str:
    """A new context through `manage.py create_context`; returns its token."""
    out = subprocess.run(
        [_python(morphz_dir), "manage.py", "create_context", slug, "--capacity-tokens", "2000000"],
        cwd=morphz_dir,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip().splitlines()[-1]


def make_learner(name: str) -> Learner:
    if name == "offline":
        return OfflineLearner()
    from morphz_statebench.models import model_from_env

    return LLMLearner(model_from_env())


def learn_and_freeze(
    url: str, slug: str, token: str, data: Path, domain: str, learner: Learner, retries: int = 3
) -> LearnedContext:
    from morphz_client import MorphzClient, MorphzError

    dataset = load_domain(data, domain)
    with MorphzClient(url, token, context=slug, timeout=300) as client:
        if isinstance(learner, LLMLearner) and not learner.instructions:
            # the model protocol (R45): how to write transactions, in this context's terms
            with contextlib.suppress(MorphzError):
                learner.instructions = str(
                    client._request("GET", client._ctx("protocol/")).get("instructions") or ""
                )
        report = learn(client, dataset, learner, retries=retries)
        manifest = freeze_with_manifest(client, dataset, report)
    return LearnedContext(domain, url, slug, token, manifest)


def ensure_learned(
    url: str, morphz_dir: Path | None, data: Path, domains: list[str], learner_name: str
) -> dict[str, LearnedContext]:
    known = load_contexts()
    out: dict[str, LearnedContext] = {}
    for domain in domains:
        dataset = load_domain(data, domain)
        existing = known.get(domain)
        if existing and existing.manifest.matches(dataset, learner_name):
            existing.url = url  # the server may listen elsewhere this time
            if _still_frozen(existing):
                print(f"{domain}: reusing {existing.slug} (its manifest matches the inputs)")
                save_context(existing)
                out[domain] = existing
                continue
        if morphz_dir is None:
            raise SystemExit("creating a context needs MORPHZ_DIR (the Morphz checkout)")
        slug = f"statebench-{domain.replace('_', '-')}-{learner_name}-{int(time.time())}"
        token = create_context(morphz_dir, slug)
        learned = learn_and_freeze(url, slug, token, data, domain, make_learner(learner_name))
        save_context(learned)
        m = learned.manifest
        print(
            f"{domain}: learned {len(m.inputs)} trajectories into {slug} in {m.learn_seconds:.0f} s: "
            f"version {m.version}, tick {m.tick}, frozen {m.frozen}, {len(m.frames)} frames, "
            f"cost ${m.cost_usd:.2f}"
        )
        out[domain] = learned
    return out


def _still_frozen(learned: LearnedContext) -> bool:
    from morphz_client import MorphzError

    try:
        with learned.client() as client:
            context = client.context()
    except MorphzError:
        return False
    return bool(context.get("frozen")) and int(context["version"]) == learned.manifest.version


def _write_shims(folder: Path) -> None:
    (folder / "agents").mkdir(parents=True, exist_ok=True)
    (folder / "clients").mkdir(parents=True, exist_ok=True)
    (folder / "agents" / "morphz_agents.py").write_text(AGENTS_SHIM)
    (folder / "clients" / "morphz_clients.py").write_text(CLIENTS_SHIM)


def passes(results: Path) -> tuple[int, int, float]:
    done = passed = 0
    cost = 0.0
    for path in results.rglob("*.json"):
        if path.name == "metrics.json":
            continue
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or "conversation" not in data:
            continue
        done += 1
        passed += int(data.get("task_completion_pass") or 0)
        cost += float(data.get("cost_usd") or 0.0)
    return passed, done, cost


def cmd_learn(args: argparse.Namespace) -> int:
    domains = parse_domains(args.domains)
    with morphz_server(args.morphz_url, args.morphz_dir) as url:
        ensure_learned(url, args.morphz_dir, args.data, domains, args.learner)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from morphz_statebench.audit import audit

    domains = parse_domains(args.domains)
    systems = [a.strip() for a in args.agent.split(",") if a.strip()]
    for system in systems:
        if system not in AGENT_CLASSES:
            raise SystemExit(f"unknown agent {system!r}; one of {', '.join(AGENT_CLASSES)}")
    folder = workdir()
    _write_shims(folder)
    model = os.environ.get("MORPHZ_STATEBENCH_MODEL") or os.environ.get("STATE_BENCH_AGENT_MODEL")
    if not model:
        raise SystemExit("set MORPHZ_STATEBENCH_MODEL (the agent's model)")
    rows = []
    failed = False
    with morphz_server(args.morphz_url, args.morphz_dir) as url:
        if any(system != "none" for system in systems):
            ensure_learned(url, args.morphz_dir, args.statebench_dir, domains, args.learner)
        env = {**os.environ, "MORPHZ_STATEBENCH_WORKDIR": str(folder)}
        for system in systems:
            total = done = 0
            cost = 0.0
            for domain in domains:
                out = folder / "outputs" / system / domain
                command = [
                    sys.executable, "-m", "state_bench.scripts.run_batch",
                    "--domain", domain, "--split", "test",
                    "--num-runs", str(args.num_runs),
                    "--num-workers", str(args.workers),
                    "--retrieve-learnings-top-k", "3",
                    "--agent-model-name", model,
                    "--output-dir", str(out),
                ]  # fmt: skip
                agent_class = AGENT_CLASSES[system]
                if agent_class:
                    command += ["--agent-class", agent_class]
                if system == "full":
                    command += ["--agent-client-class", "MorphzModelClient"]
                subprocess.run(command, cwd=folder, env=env, check=True)
                passed, ran, spent = passes(out)
                print(f"{system} / {domain}: {passed}/{ran} passed, agent cost ${spent:.2f}")
                total, done, cost = total + passed, done + ran, cost + spent
            audited = ""
            if system != "none":
                report = audit(folder / "outputs" / system)
                print(report.summary())
                failed |= not report.ok
                audited = "audit passed" if report.ok else "audit FAILED"
            rows.append((system, total, done, cost, audited))
    print()
    for system, total, done, cost, audited in rows:
        print(f"{system:9s} {total}/{done} passed  agent cost ${cost:.2f}  {audited}")
    return 1 if failed else 0


def cmd_scripted(args: argparse.Namespace) -> int:
    from morphz_statebench.audit import audit
    from morphz_statebench.scripted import run_scripted

    tasks = [t for t in args.tasks.split(",") if t]
    results = run_scripted(args.statebench_dir, args.domain, tasks, args.out)
    failed = False
    for result in results:
        status = "identical" if not result.mismatches else "; ".join(result.mismatches)
        print(f"{args.domain}/{result.task_id}: {result.tool_calls} tool calls, results {status}")
        failed |= bool(result.mismatches)
    if args.retrieve_query:
        from morphz_statebench.scripted import check_retrieve_agent

        learnings = check_retrieve_agent(args.domain, args.retrieve_query)
        print(f"retrieve_learnings: {len(learnings)} learnings")
        for text in learnings:
            print("  | " + text.splitlines()[0])
    report = audit(args.out)
    print(report.summary())
    return 1 if failed or not report.ok else 0


def cmd_audit(args: argparse.Namespace) -> int:
    from morphz_statebench.audit import audit

    report = audit(args.results)
    print(report.summary())
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m morphz_statebench", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def morphz_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--morphz-url", default=os.environ.get("MORPHZ_URL"))
        p.add_argument("--morphz-dir", type=Path, default=default_morphz_dir())
        p.add_argument("--learner", choices=["offline", "llm"], default="llm")

    p = sub.add_parser("learn", help="learn and freeze the domains' contexts")
    p.add_argument("--data", type=Path, required=True, help="STATE-Bench checkout or data folder")
    p.add_argument("--domains", default="all")
    morphz_args(p)
    p.set_defaults(func=cmd_learn)

    p = sub.add_parser("run", help="the whole experiment on the test split")
    p.add_argument("--statebench-dir", type=Path, required=True)
    p.add_argument("--domains", default="all")
    p.add_argument(
        "--agent", default="full", help="full, retrieve, none, or several: full,retrieve,none"
    )
    p.add_argument("--num-runs", type=int, default=1)
    p.add_argument("--workers", type=int, default=4)
    morphz_args(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("scripted", help="offline: replay train tasks through the orchestrator")
    p.add_argument("--statebench-dir", type=Path, required=True)
    p.add_argument("--domain", choices=DOMAINS, required=True)
    p.add_argument("--tasks", required=True, help="comma-separated train task ids")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--retrieve-query", default="", help="also check the retrieve agent with it")
    p.set_defaults(func=cmd_scripted)

    p = sub.add_parser("audit", help="audit a results folder")
    p.add_argument("--results", type=Path, required=True)
    p.set_defaults(func=cmd_audit)

    args = parser.parse_args(argv)
    result: Any = args.func(args)
    return int(result)


if __name__ == "__main__":
    sys.exit(main())
