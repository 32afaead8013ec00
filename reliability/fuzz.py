"""Property-based fuzz of every endpoint from our OpenAPI schema (schemathesis on
hypothesis), valid and invalid inputs (RELIABILITY.md, "Fuzz").

    .venv/bin/python -m reliability.fuzz [--examples 100]

Counts the inputs tried; fails on any 5xx, any error outside the standard shape, and any
write caused by an input the server refused or by an input that breaks the schema.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

from reliability.stack import Stack, exit_on_sigterm


def _problem(response: Any) -> str | None:
    """What is wrong with a response: a 5xx, or an error not in the standard shape."""
    if response.status_code >= 500:
        return f"{response.status_code} {response.text[:200]}"
    if response.status_code < 400:
        return None
    try:
        body = response.json()
    except ValueError:
        return f"{response.status_code} not JSON: {response.text[:200]!r}"
    if set(body) != {"error"} or set(body["error"]) != {"code", "message", "details"}:
        return f"{response.status_code} not the error shape: {body}"
    return None


def fuzz(
    base: str,
    token: str,
    slug: str,
    *,
    examples: int,
    budget_seconds: float,
    writes: Callable[[], tuple[int, int]],
) -> dict[str, Any]:
    """Run every operation in both modes; `writes()` reads (version, last_seq) of `slug`."""
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode

    headers = {"Authorization": f"Bearer {token}"}
    schema = schemathesis.openapi.from_url(f"{base}/api/schema/")
    deadline = time.monotonic() + budget_seconds
    tried = {"positive": 0, "negative": 0}
    refused_writes: list[str] = []
    failures: list[str] = []

    def runner(operation: Any, mode: Any) -> Callable[[], None]:
        positive = mode == GenerationMode.POSITIVE

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case: Any) -> None:
            if time.monotonic() > deadline:
                return
            calls = tried["positive"] + tried["negative"]
            # Mostly our own context, so requests get past the access check.
            if case.path_parameters and "slug" in case.path_parameters and calls % 5:
                case.path_parameters["slug"] = slug
            before = writes()
            response = case.call(base_url=base, headers=headers, timeout=30)
            tried["positive" if positive else "negative"] += 1
            problem = _problem(response)
            where = f"{case.method} {case.formatted_path} body={case.body!r:.200}"
            if problem:
                failures.append(f"{where} -> {problem}")
            if response.status_code >= 400 and writes() != before:
                refused_writes.append(f"{where} -> {response.status_code} but wrote")

        return run

    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            # Negative mode cannot break an operation that takes no input at all.
            with contextlib.suppress(Unsatisfiable):
                runner(operation, mode)()
    return {
        "inputs_tried": tried["positive"] + tried["negative"],
        "valid_mode": tried["positive"],
        "invalid_mode": tried["negative"],
        "failures": failures[:30],
        "refused_but_wrote": refused_writes[:30],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=100, help="per operation and mode")
    parser.add_argument("--budget", type=float, default=1200, help="seconds")
    args = parser.parse_args()
    exit_on_sigterm()
    with Stack() as stack:
        token = stack.create_context("fuzz", "--capacity-tokens", "2000")
        import httpx

        auth = {"Authorization": f"Bearer {token}"}
        url = f"{stack.base}/api/v1/contexts/fuzz/"
        httpx.post(
            url + "events/", json={"kind": "tool_result", "content": "seed log"}, headers=auth
        )
        httpx.post(url + "actions/", json={"name": "deploy"}, headers=auth)
        httpx.post(
            url + "transactions/",
            json={
                "text": "(context-tx (derive release (goal v1)) (derive proof (from @e1 release)"
                " (ok yes)) (relate proof supports release))"
            },
            headers=auth,
        )
        with stack.connect() as conn:

            def writes() -> tuple[int, int]:
                row = conn.execute(
                    "SELECT version, last_seq FROM memory_context WHERE slug = 'fuzz'"
                ).fetchone()
                assert row is not None
                return int(row[0]), int(row[1])

            result = fuzz(
                stack.base,
                token,
                "fuzz",
                examples=args.examples,
                budget_seconds=args.budget,
                writes=writes,
            )
    print(json.dumps(result, indent=2))
    return 0 if not result["failures"] and not result["refused_but_wrote"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
