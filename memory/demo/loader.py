"""The demo context (R42): the design document's two worked examples, loaded through the real
memory functions so a newcomer opening `/` sees a real cognitive graph.

The story: a release agent ships `shop-web` (a single-package project), then the `web` package
of a workspace, and finally induces `release-procedure` from the two release cases. The
numbers the design document prints are kept exact: the regression-test log is `@e42`, the
first transaction is written against version 12 and the induction against version 42, so the
padding before them is real agent work (read a file, digest it into a frame, retire the raw
output), not filler. `load_demo` asserts those numbers so a change in how the engine counts
shows up as a loud failure, not as a demo that quietly disagrees with the document.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from memory.contexts import create_context, issue_token
from memory.models import Context
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event, register_action
from memory.tx.engine import Author, submit_transaction

DEMO_SLUG = "demo"
DEMO_USER = "demo"
AGENT = Author("release-agent", "agent")

# The design document's first worked example, verbatim.
FIRST_EXAMPLE = """(context-tx
  (base-version 12)
  (reason "测试结果已吸收，继续准备发布")
  (derive test-result (from @e42) (tests passed))
  (revise release (goal ship-v1) (stage packaging))
  (relate test-result supports release)
  (retire @e42))"""

# The design document's induction transaction, verbatim.
INDUCTION_EXAMPLE = """(context-tx
  (base-version 42)
  (reason "将两次发布经验归纳为可复用流程")
  (derive release-procedure
    (from release-case-a release-case-b)
    (steps "测试通过后构建，核验本次产物，再打包。")
    (single-package
      (test "npm test")
      (build "npm run build")
      (artifact "dist/"))
    (workspace
      (test "pnpm --filter web test")
      (build "pnpm --filter web build")
      (artifact "apps/web/dist/"))
    (applicability "先核对当前项目布局和脚本，再选择对应分支。"))
  (relate release-procedure supersedes release-case-a)
  (relate release-procedure supersedes release-case-b)
  (retire release-case-a release-case-b))"""


@dataclass(frozen=True)
class Step:
    """One piece of routine agent work: run an action, read its output, digest it."""

    action: str
    output: str
    frame: str | None = None  # digest the output into this frame (and retire the output)
    fields: str = ""  # the frame body as S-expression fields
    extra: str = ""  # further operations in the same transaction


# Project A (`shop-web`, single package) before the regression tests: ten digested steps and
# three left as active observations, which with the opening request and two transactions
# bring the history to @e40 and the version to 12.
SHOP_WEB_STEPS = [
    Step(
        "read_file package.json",
        '{\n  "name": "shop-web",\n  "version": "1.0.0",\n  "scripts": {\n'
        '    "test": "vitest run",\n    "build": "vite build",\n    "lint": "eslint src"\n  }\n}',
        "project-layout",
        "(project shop-web) (layout single-package) (manager npm) (scripts test build lint)",
    ),
    Step("read_file .nvmrc", "20.11.1", "node-version", '(node "20.11.1") (pinned-by .nvmrc)'),
    Step(
        "git log --oneline -5",
        "a1f3c2e fix cart rounding\n9b2e114 add coupon banner\n77c0d9a bump vite\n"
        "3e5aa01 checkout copy\n0f9e3b2 release 0.9.4",
        "recent-changes",
        '(since "0.9.4") (changes "fix cart rounding" "add coupon banner" "bump vite")',
    ),
    Step(
        "read_file CHANGELOG.md",
        "## Unreleased\n- Coupon banner on the cart page\n- Cart rounding fix\n",
        "changelog-draft",
        '(version "1.0.0") (entries "Coupon banner on the cart page" "Cart rounding fix")',
    ),
    Step(
        "read_file .github/workflows/ci.yml",
        "jobs:\n  ci:\n    steps: [checkout, setup-node, npm ci, npm run lint, npm test, npm run build]",
        "ci-pipeline",
        "(steps lint test build) (runner github-actions)",
    ),
    Step(
        "npm ls --depth 0",
        "shop-web@1.0.0\n├── react@18.3.1\n├── vite@5.4.2\n└── vitest@2.0.5",
        "dependencies",
        '(react "18.3.1") (vite "5.4.2") (vitest "2.0.5")',
    ),
    Step(
        "read_file docs/RELEASING.md",
        "1. Run the regression suite.\n2. Build.\n3. Check dist/ for source maps.\n4. npm pack.",
        "release-checklist",
        '(steps "regression suite" "build" "check dist/" "npm pack")',
        "(relate release depends-on release-checklist)",
    ),
    Step(
        "npm run lint",
        "> eslint src\n\n✔ 0 problems",
        "lint-result",
        "(lint passed)",
        "(relate lint-result supports release)",
    ),
    Step(
        "read_file .env.production.example",
        "PUBLIC_API=https://api.shop.example\nCDN_BUCKET=shop-web-assets",
        "deploy-target",
        "(api https://api.shop.example) (bucket shop-web-assets)",
    ),
    Step(
        "npm whoami --registry internal",
        "release-bot",
        "publish-access",
        "(registry internal) (user release-bot)",
        "(protect user-preferences)",
    ),
    Step("ls", "README.md\nCHANGELOG.md\npackage.json\nsrc/\npublic/\ndocs/"),
    Step("read_file README.md", "# shop-web\n\nThe storefront. `npm run dev` to start."),
    Step("git status --short", ""),
]

# Project B (the `web` package of a workspace), digested the same way.
WORKSPACE_STEPS = [
    Step(
        "read_file pnpm-workspace.yaml",
        "packages:\n  - apps/*\n  - packages/*",
        "workspace-layout",
        "(manager pnpm) (packages apps/* packages/*) (target apps/web)",
    ),
    Step(
        "read_file apps/web/package.json",
        '{ "name": "web", "scripts": { "test": "vitest run", "build": "vite build" } }',
        "web-package",
        "(name web) (path apps/web) (scripts test build)",
    ),
    Step("pnpm --version", "9.7.0", "pnpm-version", '(pnpm "9.7.0")'),
    Step(
        "read_file apps/web/vite.config.ts",
        "export default { build: { outDir: 'dist', sourcemap: false } }",
        "web-build-config",
        "(out-dir apps/web/dist) (sourcemap off)",
    ),
    Step(
        "pnpm --filter web lint",
        "✔ 0 problems",
        "web-lint",
        "(lint passed)",
    ),
]


def _long_test_log() -> str:
    """A regression-test log of a few thousand lines, like the design document's @e42."""
    suites = ["cart", "checkout", "coupon", "catalog", "search", "account", "i18n", "payments"]
    lines = ["> shop-web@1.0.0 test", "> vitest run", ""]
    n = 0
    for suite in suites:
        lines.append(f" ✓ src/{suite}/{suite}.test.ts")
        for case in range(160):
            n += 1
            lines.append(
                f"   ✓ {suite} › case {case:03d} behaves as specified ({(n * 7) % 40 + 1}ms)"
            )
        lines.append("")
    lines += [
        f" Test Files  {len(suites)} passed ({len(suites)})",
        f"      Tests  {n} passed ({n})",
        "   Duration  41.82s",
    ]
    return "\n".join(lines)


class DemoLoader:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.pk = context.pk

    # -- the agent's verbs --------------------------------------------------------------
    def observe(self, kind: str, content: str, delivers: list[str] | None = None) -> str:
        return append_event(self.pk, kind=kind, content=content, delivers=delivers).event.ref

    def act(self, name: str) -> str:
        return register_action(self.pk, name=name).event.ref

    def commit(self, text: str) -> None:
        submit_transaction(self.pk, text=text, author=AGENT)

    def evaluate(self) -> None:
        evaluate(self.pk)

    def state(self) -> tuple[int, int]:
        self.context.refresh_from_db()
        return self.context.last_seq, self.context.version

    def expect(self, *, seq: int, version: int, before: str) -> None:
        actual = self.state()
        if actual != (seq, version):
            raise AssertionError(
                f"demo story out of step before {before}: expected @e{seq} and version "
                f"{version}, got @e{actual[0]} and version {actual[1]}"
            )

    def step(self, step: Step) -> None:
        action = self.act(step.action)
        result = self.observe("tool_result", step.output or "(no output)", delivers=[action])
        self.evaluate()
        if step.frame:
            self.commit(
                f'(context-tx (reason "读完 {step.action} 的输出")'
                f" (derive {step.frame} (from {result}) {step.fields}) {step.extra}"
                f" (retire {result}))"
            )

    # -- the story ------------------------------------------------------------------------
    def load(self) -> None:
        request = self.observe(
            "user_message",
            "请发布 shop-web v1（ship-v1）：回归测试通过后再打包。回复请用中文，尽量简洁。",
        )
        self.evaluate()
        self.commit(
            '(context-tx (reason "记下用户的偏好")'
            f" (derive user-preferences (from {request}) (language zh-CN) (replies concise)))"
        )
        # The frame the first worked example revises: the release, waiting for the tests.
        self.commit(
            '(context-tx (reason "收到发布任务")'
            f" (derive release (from {request}) (goal ship-v1) (stage waiting-for-tests)))"
        )
        for step in SHOP_WEB_STEPS:
            self.step(step)
        self.observe("agent_message", "配置已读完，开始跑回归测试。")
        self.expect(seq=40, version=12, before="the regression tests")
        tests = self.act("npm test")
        log = self.observe("tool_result", _long_test_log(), delivers=[tests])
        assert log == "@e42", log
        self.evaluate()
        self.commit(FIRST_EXAMPLE)

        build = self.result_of(
            "npm run build",
            "vite v5.4.2 building for production...\n✓ 412 modules transformed.\ndist/index.html 0.46 kB\ndist/assets/index-4f2a.js 148.2 kB\n✓ built in 3.1s",
        )
        check = self.result_of(
            "ls dist/ && grep -L sourceMappingURL dist/assets/*.js",
            "index.html\nassets/\nno source maps found",
        )
        pack = self.result_of("npm pack", "shop-web-1.0.0.tgz")
        self.commit(
            '(context-tx (reason "shop-web 已打包，记录这次发布的做法")'
            " (revise release (goal ship-v1) (stage packaged) (artifact shop-web-1.0.0.tgz))"
            f" (derive release-case-a (from {log} {build} {check} {pack})"
            ' (layout "单包项目") (test "npm test") (build "npm run build")'
            ' (artifact "dist/") (result "测试、构建和产物核验通过"))'
            " (relate release-case-a supports release)"
            f" (retire {build} {check} {pack}))"
        )
        self.observe(
            "agent_message", "shop-web v1 已打包：shop-web-1.0.0.tgz。", delivers=[request]
        )
        self.commit(
            '(context-tx (reason "发布已交付，近期提交列表不再需要") (retire recent-changes))'
        )

        second = self.observe("user_message", "接下来发布工作区里的 web 包（apps/web）。")
        self.evaluate()
        self.commit(
            '(context-tx (reason "收到第二个发布任务")'
            f" (derive release-web (from {second}) (goal web-2.3.0) (stage waiting-for-tests)))"
        )
        for step in WORKSPACE_STEPS:
            self.step(step)
        test_b = self.result_of(
            "pnpm --filter web test", "Test Files  12 passed (12)\n     Tests  389 passed (389)"
        )
        self.commit(
            '(context-tx (reason "web 包测试通过")'
            " (revise release-web (goal web-2.3.0) (stage building)))"
        )
        build_b = self.result_of(
            "pnpm --filter web build",
            "vite v5.4.2 building for production...\n✓ built in 2.4s\napps/web/dist/index.html",
        )
        check_b = self.result_of("ls apps/web/dist/", "index.html\nassets/")
        pack_b = self.result_of("pnpm --filter web pack", "web-2.3.0.tgz")
        self.commit(
            '(context-tx (reason "web 包已打包，记录这次发布的做法")'
            " (revise release-web (goal web-2.3.0) (stage packaged) (artifact web-2.3.0.tgz))"
            f" (derive release-case-b (from {test_b} {build_b} {check_b} {pack_b})"
            ' (layout "工作区中的 web 包") (test "pnpm --filter web test")'
            ' (build "pnpm --filter web build") (artifact "apps/web/dist/")'
            ' (result "测试、构建和产物核验通过"))'
            " (relate release-case-b supports release-web)"
            f" (retire {test_b} {build_b} {check_b} {pack_b}))"
        )
        self.observe("agent_message", "web 2.3.0 已打包。", delivers=[second])
        for ops in FOLLOW_UPS:
            self.commit(f'(context-tx (reason "发布后的整理") {ops})')
        # Routine notes, if needed, up to the version the induction example was written against.
        _, version = self.state()
        for n in range(version, 42):
            self.commit(
                f'(context-tx (reason "整理笔记") (derive note-{n - version + 1}'
                f' (topic "release follow-up") (item "{NOTES[(n - version) % len(NOTES)]}")))'
            )
        self.expect(seq=self.state()[0], version=42, before="the induction")
        self.commit(INDUCTION_EXAMPLE)

        # Something inside its grace window, so the retirement panel has work to show.
        self.commit(
            '(context-tx (reason "变更说明已写进发布流程，草稿不再需要") (retire changelog-draft))'
        )
        for text in ("error rate 0.1% after web 2.3.0", "cdn cache hit ratio 97%", "no new issues"):
            self.observe("external_fact", f"monitoring: {text}")
            self.evaluate()

    def result_of(self, action: str, output: str) -> str:
        ref = self.observe("tool_result", output, delivers=[self.act(action)])
        self.evaluate()
        return ref


# After both releases the agent connects what it learned and plans follow-ups.
FOLLOW_UPS = [
    "(relate web-package depends-on workspace-layout) (relate pnpm-version supports workspace-layout)",
    "(relate web-build-config supports web-package)",
    "(relate ci-pipeline depends-on node-version)",
    "(relate deploy-target depends-on publish-access)",
    '(revise release-checklist (steps "regression suite" "build" "check dist/ has no source maps"'
    ' "npm pack"))',
    '(derive sourcemap-policy (from @e47) (rule "no source maps in published artifacts"))'
    " (relate sourcemap-policy supports release-checklist)",
    '(derive monitor-error-rate (task "watch error rate for a week") (threshold "0.5%"))'
    " (relate monitor-error-rate depends-on deploy-target)",
    '(derive vite-upgrade-plan (from dependencies) (from-version "5.4.2") (to-version "6.x")'
    ' (when "after both releases settle"))',
    '(derive cdn-cache-check (bucket shop-web-assets) (check "cache headers on index.html"))'
    " (relate cdn-cache-check depends-on deploy-target)",
    '(derive command-differences (npm "npm test / npm run build")'
    ' (pnpm "pnpm --filter web test / pnpm --filter web build"))'
    " (relate command-differences supports release-case-b)",
    '(derive node-22-migration (from node-version) (status idea) (blocker "CI image"))'
    " (relate node-22-migration depends-on node-version)",
    '(derive lockfile-policy (rule "commit lockfiles; never publish without one"))'
    " (relate lockfile-policy supports release-checklist)",
    '(derive cart-rounding-test (from recent-changes) (task "add a regression test for cart rounding"))',
    '(derive release-calendar (next "web 2.4.0") (cadence "every two weeks"))'
    " (relate release-calendar depends-on release-checklist)",
    '(derive pnpm-upgrade (from pnpm-version) (to "10.x") (risk "lockfile format change"))',
    '(derive rollback-plan (from release) (how "re-deploy the previous tgz") (owner release-bot))'
    " (relate rollback-plan supports release)",
    "(relate web-lint supports release-web)",
    '(derive handoff-note (summary "两个项目都已打包，待归纳发布流程") (open monitor-error-rate))',
    "(revise project-layout (project shop-web) (layout single-package) (manager npm)"
    " (scripts test build lint) (ci github-actions))",
]

NOTES = [
    "监控发布后的错误率",
    "下次发布前更新 vite",
    "检查 CDN 缓存设置",
    "确认产物没有 source map",
    "记录 npm 与 pnpm 的命令差异",
    "在发布说明中链接变更记录",
]


@dataclass(frozen=True)
class DemoLogin:
    created: bool
    username: str
    password: str
    token: str | None  # shown once, when the demo is first loaded


def password_file(data_dir: Path) -> Path:
    return data_dir / "demo_password"


def ensure_demo_user(data_dir: Path) -> str:
    """The staff superuser `demo`; its random password is kept in MORPHZ_DATA_DIR."""
    users = get_user_model()
    path = password_file(data_dir)
    user = users.objects.filter(username=DEMO_USER).first()
    if user is not None and path.exists():
        return path.read_text().strip()
    password = secrets.token_urlsafe(12)
    if user is None:
        users.objects.create_superuser(DEMO_USER, "demo@example.invalid", password)
    else:  # the password file was lost: give the account a new one we can show
        user.set_password(password)
        user.save(update_fields=["password"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(password + "\n")
    path.chmod(0o600)
    return password


def load_demo(data_dir: Path) -> DemoLogin:
    """Create the demo context, user and token; when the context exists, change nothing in it."""
    password = ensure_demo_user(data_dir)
    if Context.objects.filter(slug=DEMO_SLUG).exists():
        return DemoLogin(False, DEMO_USER, password, None)
    # One database transaction: an interrupted load leaves no half demo behind.
    with transaction.atomic():
        context = create_context(DEMO_SLUG, name="Demo: releasing shop-web and web")
        DemoLoader(context).load()
        token = issue_token(context, name="demo")
    return DemoLogin(True, DEMO_USER, password, token.raw)
