"""The demo story's data: the two worked examples of docs/design.md, verbatim, and the
routine agent work around them (R42). `memory.demo.player` plays it through the real memory
functions.
"""

from __future__ import annotations

from dataclasses import dataclass

# The first worked example (docs/design.md), verbatim.
FIRST_EXAMPLE = """(context-tx
  (base-version 12)
  (reason "测试结果已吸收，继续准备发布")
  (derive test-result (from @e42) (tests passed))
  (revise release (goal ship-v1) (stage packaging))
  (relate test-result supports release)
  (retire @e42))"""


# The induction example (docs/design.md), verbatim.
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


def long_test_log() -> str:
    """A regression-test log of a few thousand lines, like @e42 of the first worked example."""
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
    '(derive handoff-note (summary "both projects packaged; the release procedure is still to be written") (open monitor-error-rate))',
    "(revise project-layout (project shop-web) (layout single-package) (manager npm)"
    " (scripts test build lint) (ci github-actions))",
]


NOTES = [
    "watch the error rate after the release",
    "update vite before the next release",
    "check the CDN cache settings",
    "make sure artifacts ship without source maps",
    "note the command differences between npm and pnpm",
    "link the changelog from the release notes",
]
