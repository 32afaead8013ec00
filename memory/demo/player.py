"""The demo context (R42): the two worked examples of docs/design.md and the routine agent work
around them, played through the real memory functions so a newcomer opening `/` sees a real
cognitive graph. The numbers of the examples are kept exact (the log is `@e42`, the
transactions are written at versions 12 and 42) and `load_demo` asserts them, so a change in
how the engine counts fails loudly instead of quietly disagreeing with the examples."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from memory.contexts import create_context, issue_token
from memory.demo.story import (
    FIRST_EXAMPLE,
    FOLLOW_UPS,
    INDUCTION_EXAMPLE,
    NOTES,
    SHOP_WEB_STEPS,
    WORKSPACE_STEPS,
    Step,
    long_test_log,
)
from memory.models import Context
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event, register_action
from memory.tx.engine import Author, submit_transaction
from memory.vocabulary import event_ref

DEMO_SLUG = "demo"
DEMO_USER = "demo"
AGENT = Author("release-agent", "agent")


class DemoPlayer:
    """Plays the demo story into one context through the public write functions, checking
    after each chapter that the history and the version are where the story expects them."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.pk = context.pk

    # -- the agent's verbs --------------------------------------------------------------
    def observe(self, kind: str, content: str, delivers: list[str] | None = None) -> str:
        """Append an event of `kind`; its ref."""
        return append_event(self.pk, kind=kind, content=content, delivers=delivers).event.ref

    def act(self, name: str) -> str:
        """Register the external action `name`; its ref."""
        return register_action(self.pk, name=name).event.ref

    def commit(self, text: str) -> None:
        """Commit a transaction as the release agent (raises what the engine raises)."""
        submit_transaction(self.pk, text=text, author=AGENT)

    def evaluate(self) -> None:
        """Run one evaluation (claims the inputs, may advance the tick)."""
        evaluate(self.pk)

    def state(self) -> tuple[int, int]:
        """The context's last event seq and cognitive version now."""
        self.context.refresh_from_db()
        return self.context.last_seq, self.context.version

    def expect(self, *, seq: int, version: int, before: str) -> None:
        """AssertionError unless the story is at event `seq` and version `version`."""
        actual = self.state()
        if actual != (seq, version):
            raise AssertionError(
                f"demo story out of step before {before}: expected {event_ref(seq)} and version "
                f"{version}, got {event_ref(actual[0])} and version {actual[1]}"
            )

    def step(self, step: Step) -> None:
        """One tool step of the story: register the action, append its result, evaluate, and
        derive the step's frame from the result (retiring the raw output)."""
        action = self.act(step.action)
        result = self.observe("tool_result", step.output or "(no output)", delivers=[action])
        self.evaluate()
        if step.frame:
            self.commit(
                f'(context-tx (reason "read the output of {step.action}")'
                f" (derive {step.frame} (from {result}) {step.fields}) {step.extra}"
                f" (retire {result}))"
            )

    # -- the story ------------------------------------------------------------------------
    def play(self) -> None:
        """The whole story: two releases, the follow-ups and the second worked example, then a
        frame inside its grace window and a few monitoring facts."""
        self.first_release()
        self.second_release()
        self.induction()
        self.aftermath()

    def first_release(self) -> None:
        """shop-web, a single package: the first worked example, then the release case."""
        request = self.observe(
            "user_message",
            "Please release shop-web v1 (ship-v1): package it only after the regression tests "
            "pass. Keep your replies short.",
        )
        self.evaluate()
        self.commit(
            '(context-tx (reason "note the user\'s preferences")'
            f" (derive user-preferences (from {request}) (language en) (replies concise)))"
        )
        # The frame the first worked example revises: the release, waiting for the tests.
        self.commit(
            '(context-tx (reason "new task: the release")'
            f" (derive release (from {request}) (goal ship-v1) (stage waiting-for-tests)))"
        )
        for step in SHOP_WEB_STEPS:
            self.step(step)
        self.observe("agent_message", "Configuration read; running the regression tests now.")
        self.expect(seq=40, version=12, before="the regression tests")
        tests = self.act("npm test")
        log = self.observe("tool_result", long_test_log(), delivers=[tests])
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
            '(context-tx (reason "shop-web is packaged; record how this release was done")'
            " (revise release (goal ship-v1) (stage packaged) (artifact shop-web-1.0.0.tgz))"
            f" (derive release-case-a (from {log} {build} {check} {pack})"
            ' (layout "single package") (test "npm test") (build "npm run build")'
            ' (artifact "dist/") (result "tests, build and artifact check passed"))'
            " (relate release-case-a supports release)"
            f" (retire {build} {check} {pack}))"
        )
        self.observe(
            "agent_message", "shop-web v1 is packaged: shop-web-1.0.0.tgz.", delivers=[request]
        )
        self.commit(
            '(context-tx (reason "release delivered; the recent-changes list is no longer needed")'
            " (retire recent-changes))"
        )

    def second_release(self) -> None:
        """The web package of a workspace: a second release case."""
        second = self.observe(
            "user_message", "Next, release the web package of the workspace (apps/web)."
        )
        self.evaluate()
        self.commit(
            '(context-tx (reason "new task: the second release")'
            f" (derive release-web (from {second}) (goal web-2.3.0) (stage waiting-for-tests)))"
        )
        for step in WORKSPACE_STEPS:
            self.step(step)
        test_b = self.result_of(
            "pnpm --filter web test", "Test Files  12 passed (12)\n     Tests  389 passed (389)"
        )
        self.commit(
            '(context-tx (reason "web package tests passed")'
            " (revise release-web (goal web-2.3.0) (stage building)))"
        )
        build_b = self.result_of(
            "pnpm --filter web build",
            "vite v5.4.2 building for production...\n✓ built in 2.4s\napps/web/dist/index.html",
        )
        check_b = self.result_of("ls apps/web/dist/", "index.html\nassets/")
        pack_b = self.result_of("pnpm --filter web pack", "web-2.3.0.tgz")
        self.commit(
            '(context-tx (reason "web is packaged; record how this release was done")'
            " (revise release-web (goal web-2.3.0) (stage packaged) (artifact web-2.3.0.tgz))"
            f" (derive release-case-b (from {test_b} {build_b} {check_b} {pack_b})"
            ' (layout "web package in a workspace") (test "pnpm --filter web test")'
            ' (build "pnpm --filter web build") (artifact "apps/web/dist/")'
            ' (result "tests, build and artifact check passed"))'
            " (relate release-case-b supports release-web)"
            f" (retire {test_b} {build_b} {check_b} {pack_b}))"
        )
        self.observe("agent_message", "web 2.3.0 is packaged.", delivers=[second])

    def induction(self) -> None:
        """Follow-ups and notes up to version 42, then the second worked example."""
        for ops in FOLLOW_UPS:
            self.commit(f'(context-tx (reason "tidy up after the releases") {ops})')
        # Routine notes, if needed, up to the version the induction example was written against.
        _, version = self.state()
        for n in range(version, 42):
            self.commit(
                f'(context-tx (reason "write up notes") (derive note-{n - version + 1}'
                f' (topic "release follow-up") (item "{NOTES[(n - version) % len(NOTES)]}")))'
            )
        self.expect(seq=self.state()[0], version=42, before="the induction")
        self.commit(INDUCTION_EXAMPLE)

    def aftermath(self) -> None:
        """A frame inside its grace window and a few monitoring facts."""
        # Something inside its grace window, so the retirement panel has work to show.
        self.commit(
            '(context-tx (reason "the changelog is part of the release procedure now; the draft can go")'
            " (retire changelog-draft))"
        )
        for text in ("error rate 0.1% after web 2.3.0", "cdn cache hit ratio 97%", "no new issues"):
            self.observe("external_fact", f"monitoring: {text}")
            self.evaluate()

    def result_of(self, action: str, output: str) -> str:
        """Run `action` with `output` as its tool result and evaluate; the result's ref."""
        ref = self.observe("tool_result", output, delivers=[self.act(action)])
        self.evaluate()
        return ref


@dataclass(frozen=True)
class DemoLogin:
    created: bool
    username: str
    password: str
    token: str | None  # shown once, when the demo is first loaded


def password_file(data_dir: Path) -> Path:
    """Where the demo user's generated password is kept."""
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
        DemoPlayer(context).play()
        token = issue_token(context, name="demo")
    return DemoLogin(True, DEMO_USER, password, token.raw)
