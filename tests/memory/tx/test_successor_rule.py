"""The second example: induction with `supersedes` completes retirements at once (R17)."""

from __future__ import annotations

import pytest

from memory.models import RetirementRequest

INDUCTION = """(context-tx
  (base-version {base})
  (reason "将两次发布经验归纳为可复用流程")
  (derive release-procedure
    (from release-case-a release-case-b)
    (steps "测试通过后构建，核验本次产物，再打包。")
    (single-package (test "npm test") (build "npm run build") (artifact "dist/"))
    (workspace (test "pnpm --filter web test") (build "pnpm --filter web build") (artifact "apps/web/dist/"))
    (applicability "先核对当前项目布局和脚本，再选择对应分支。"))
  (relate release-procedure supersedes release-case-a)
  (relate release-procedure supersedes release-case-b){retire})"""


@pytest.fixture
def two_cases(release_team):
    agent = release_team
    log_a = agent.observe("npm test: 120 passed\nnpm run build: ok\ndist/ verified")
    log_b = agent.observe("pnpm --filter web test: ok\npnpm --filter web build: ok")
    agent.commit(
        f"""(context-tx
  (derive release-case-a (from {log_a}) (layout single-package) (test "npm test")
    (build "npm run build") (artifact "dist/") (result "tests, build and artifact verified"))
  (derive release-case-b (from {log_b}) (layout "workspace web package")
    (test "pnpm --filter web test") (build "pnpm --filter web build")
    (artifact "apps/web/dist/") (result "tests, build and artifact verified")))"""
    )
    return agent


def test_retire_with_successor_in_same_transaction_retires_both_at_once(two_cases):
    agent = two_cases
    receipt = agent.commit(
        INDUCTION.format(base=agent.version, retire="\n  (retire release-case-a release-case-b)")
    )
    assert agent.frame("release-case-a").status == "retired"
    assert agent.frame("release-case-b").status == "retired"
    assert agent.frame("release-procedure").status == "active"
    assert sorted(receipt["completed_by_successor"]) == ["release-case-a", "release-case-b"]
    assert receipt["pending_release"] == []
    assert receipt["released_tokens"] == (
        agent.frame("release-case-a").token_estimate + agent.frame("release-case-b").token_estimate
    )
    outcomes = set(RetirementRequest.objects.values_list("outcome", flat=True))
    assert outcomes == {"completed"}


def test_body_of_procedure_keeps_its_nested_order(two_cases):
    agent = two_cases
    agent.commit(
        INDUCTION.format(base=agent.version, retire="\n  (retire release-case-a release-case-b)")
    )
    body = agent.frame("release-procedure").body
    assert list(body) == ["steps", "single-package", "workspace", "applicability"]
    assert body["workspace"] == {
        "test": "pnpm --filter web test",
        "build": "pnpm --filter web build",
        "artifact": "apps/web/dist/",
    }


def test_earlier_retire_completes_when_later_transaction_creates_successor(two_cases):
    agent = two_cases
    receipt = agent.commit("(context-tx (retire release-case-a release-case-b))")
    assert agent.frame("release-case-a").status == "retiring"
    assert {p["frame"] for p in receipt["pending_release"]} == {"release-case-a", "release-case-b"}

    receipt = agent.commit(INDUCTION.format(base=agent.version, retire=""))
    assert agent.frame("release-case-a").status == "retired"
    assert agent.frame("release-case-b").status == "retired"
    assert sorted(receipt["completed_by_successor"]) == ["release-case-a", "release-case-b"]


def test_supersedes_without_sources_does_not_complete_retirement(two_cases):
    agent = two_cases
    agent.commit("(context-tx (retire release-case-a))")
    agent.commit(
        "(context-tx (derive other-method (steps x)) (relate other-method supersedes release-case-a))"
    )
    assert agent.frame("release-case-a").status == "retiring"


def test_successor_rule_ignores_active_frames(two_cases):
    agent = two_cases
    agent.commit(INDUCTION.format(base=agent.version, retire=""))
    assert agent.frame("release-case-a").status == "active"
    assert agent.frame("release-case-b").status == "active"
