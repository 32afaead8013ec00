"""Creating contexts, changing their settings, issuing and checking API tokens (R1, R38)."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from django.db import IntegrityError, connection, transaction
from django.db.models import Field
from django.utils import timezone

from memory.errors import ErrorCode, InvalidRequest, NotFound
from memory.hotsql import bound_cursor, fetch_one_prepared
from memory.kinds import AGENT_SCOPE, SCREENING_MODES, TOKEN_SCOPES
from memory.locking import lock_context_model

__all__ = [
    "InvalidRequest",
    "IssuedToken",
    "create_context",
    "delete_context",
    "issue_token",
    "revoke_token",
    "set_frozen",
    "setting_default",
    "validate_settings",
]
from memory.models import ApiToken, Context, Evaluation, SettingsChange
from memory.pressure import pressure_state
from memory.sql import statements
from memory.sql.columns import CONTEXT_ALL, CONTEXT_SETTINGS, TOKEN_ALL
from memory.times import read_time
from memory.vocabulary import SLUG_MAX

TOKEN_PREFIX = "mz_"


def hash_token(raw: str) -> str:
    """The stored form of an API token: its SHA-256 as hex (the raw token is never stored)."""
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    raw: str


def validate_settings(
    *,
    grace_ticks: int,
    capacity_tokens: int,
    pressure_percent: int,
    maintenance_percent: int,
    maintenance_exit_percent: int,
    observation_budget_tokens: int = 2000,
) -> None:
    """Check a context's settings (ticks; tokens; percents of capacity); InvalidRequest names
    the first rule broken: observation budget at least 200 tokens, grace ticks 0 or more,
    capacity at least 1 token, 0 < pressure <= maintenance <= 100 and 0 < exit < maintenance."""
    if observation_budget_tokens < 200:
        raise InvalidRequest("observation_budget_tokens must be at least 200")
    if grace_ticks < 0:
        raise InvalidRequest("grace_ticks must be 0 or more")
    if capacity_tokens < 1:
        raise InvalidRequest("capacity_tokens must be at least 1")
    if not (0 < pressure_percent <= maintenance_percent <= 100):
        raise InvalidRequest("need 0 < pressure_percent <= maintenance_percent <= 100")
    if not (0 < maintenance_exit_percent < maintenance_percent):
        raise InvalidRequest("need 0 < maintenance_exit_percent < maintenance_percent")


def check_slug(slug: Any) -> None:
    """InvalidRequest unless `slug` is a context slug: 1-64 ASCII letters, digits, '-' or '_' (it
    is part of every API and explorer URL of the context)."""
    from django.core.validators import validate_slug

    if not isinstance(slug, str) or not 0 < len(slug) <= SLUG_MAX:
        raise InvalidRequest(f"slug must be 1-{SLUG_MAX} ASCII letters, digits, '-' or '_'")
    try:
        validate_slug(slug)
    except Exception:
        raise InvalidRequest(
            f"slug {slug!r} must be ASCII letters (a-z, A-Z), digits, '-' or '_'"
        ) from None


def check_slug_free(slug: str) -> None:
    """InvalidRequest `context_exists` when a context has this slug in any case: `Demo` and
    `demo` would be two contexts a person cannot tell apart in a list or a spoken URL
    (the database's unique index on lower(slug) holds the same rule under races)."""
    taken = Context.objects.filter(slug__iexact=slug).values_list("slug", flat=True).first()
    if taken is not None:
        same = "" if taken == slug else f" (as {taken!r}: slugs are unique whatever their case)"
        raise InvalidRequest(
            f"a context with slug {slug!r} already exists{same}", code=ErrorCode.CONTEXT_EXISTS
        )


def setting_default(field: str) -> int:
    """The default the Context model declares for the setting `field` (its one place)."""
    found = Context._meta.get_field(field)
    assert isinstance(found, Field)
    return cast(int, found.default)


@transaction.atomic
def create_context(
    slug: str,
    *,
    name: str = "",
    grace_ticks: int = setting_default("grace_ticks"),
    capacity_tokens: int | None = None,
    pressure_percent: int = setting_default("pressure_percent"),
    maintenance_percent: int = setting_default("maintenance_percent"),
    maintenance_exit_percent: int = setting_default("maintenance_exit_percent"),
    observation_budget_tokens: int = setting_default("observation_budget_tokens"),
    scratch: bool = False,
) -> Context:
    """Create a context at version 0, tick 0 with these settings (capacity defaults to
    MORPHZ_DEFAULT_CAPACITY_TOKENS) and log them as its first settings. InvalidRequest for a
    bad slug or settings, `context_exists` when the slug is taken. `scratch`: an import's
    or replay's context under construction (memory.versions.replay), never listed."""
    from django.conf import settings

    check_slug(slug)
    capacity = (
        capacity_tokens if capacity_tokens is not None else settings.MORPHZ_DEFAULT_CAPACITY_TOKENS
    )
    values = {
        "grace_ticks": grace_ticks,
        "capacity_tokens": capacity,
        "pressure_percent": pressure_percent,
        "maintenance_percent": maintenance_percent,
        "maintenance_exit_percent": maintenance_exit_percent,
        "observation_budget_tokens": observation_budget_tokens,
    }
    validate_settings(**values)
    check_slug_free(slug)
    try:
        with transaction.atomic():
            context = Context.objects.create(
                slug=slug, name=name or slug, scratch=scratch, **values
            )
            _log_settings(context, "created")
            return context
    except IntegrityError:
        raise InvalidRequest(
            f"a context with slug {slug!r} already exists (whatever its case)",
            code=ErrorCode.CONTEXT_EXISTS,
        ) from None


SETTINGS_FIELDS = CONTEXT_SETTINGS


def settings_of(context: Context) -> dict[str, int]:
    """The context's settings (`SETTINGS_FIELDS`) as a dict."""
    return {name: getattr(context, name) for name in SETTINGS_FIELDS}


def _log_settings(context: Context, kind: str) -> None:
    """Record the settings in force from here on, placed in the history (docs/history.md)."""
    SettingsChange.objects.create(
        context=context,
        kind=kind,
        version=context.version,
        last_seq=context.last_seq,
        evaluations=Evaluation.objects.filter(context=context).count(),
        settings=settings_of(context),
    )


@transaction.atomic
def update_context_settings(context_id: int, **changes: int | str) -> Context:
    """Change name or settings; takes the context row lock like every commit does. A change
    of a setting is logged (`SettingsChange`) at the context's version and place in the
    history, so replay and as-of reads apply it from there on. InvalidRequest for an
    unknown or broken setting (`validate_settings`), ContextFrozen, NotFound."""
    context = lock_context_model(context_id)
    before = settings_of(context)
    unknown = set(changes) - {"name", *SETTINGS_FIELDS}
    if unknown:
        raise InvalidRequest(f"unknown settings: {', '.join(sorted(unknown))}")
    for key, value in changes.items():
        setattr(context, key, value)
    validate_settings(**settings_of(context))
    context.in_maintenance = pressure_state(context).in_maintenance
    context.save()
    if before != settings_of(context):
        _log_settings(context, "changed")
    return context


@transaction.atomic
def set_frozen(context_id: int, frozen: bool) -> Context:
    """Freeze or unfreeze a context (R54). Takes the context row lock, so a write already
    under way finishes first; every later write is refused with ContextFrozen."""
    if not isinstance(frozen, bool):
        raise InvalidRequest("frozen must be true or false", details=[{"field": "frozen"}])
    return _set_under_lock(context_id, "frozen", frozen)


@transaction.atomic
def set_screening(context_id: int, mode: str) -> Context:
    """Set how written text is screened (`memory.screening`): off, refuse or mask. Takes
    the context row lock, so a write under way finishes under the mode it started with."""
    if mode not in SCREENING_MODES:
        raise InvalidRequest(
            f"screening must be one of {', '.join(SCREENING_MODES)}",
            details=[{"field": "screening"}],
        )
    return _set_under_lock(context_id, "screening", mode)


def _set_under_lock(context_id: int, field: str, value: object) -> Context:
    """Set one field of the context under its row lock (caller's transaction), so a write
    already under way finishes first; an unchanged value is not written."""
    context = lock_context_model(context_id, allow_frozen=True)
    if getattr(context, field) != value:
        setattr(context, field, value)
        context.save(update_fields=[field])
    return context


@transaction.atomic
def delete_context(context_id: int) -> None:
    """Delete a context and everything it holds (an admin decision, not a memory operation).

    Takes the context row lock first so no commit or evaluation is half-way through."""
    try:
        context = lock_context_model(context_id, allow_frozen=True)
    except NotFound:
        return
    token_ids = list(context.tokens.values_list("pk", flat=True))
    context.delete()
    for token_id in token_ids:
        forget_token(token_id)


def issue_token(
    context: Context,
    *,
    name: str = "",
    scope: str = AGENT_SCOPE,
    expires_at: datetime | None = None,
) -> IssuedToken:
    """A new API token for `context`: the stored row and the raw token, which is shown once
    (only its hash is kept). `scope` is one of `memory.kinds.TOKEN_SCOPES` (R65, what it
    may do: `memory.scopes`); past `expires_at` (aware datetime, held in UTC:
    `memory.times.read_time`) it is refused. Raises InvalidRequest for another scope or an
    expiry not in the future or that cannot be stored. Needs no lock: tokens are not part of
    the context's history."""
    if scope not in TOKEN_SCOPES:
        raise InvalidRequest(
            f"scope must be one of {', '.join(TOKEN_SCOPES)}", details=[{"field": "scope"}]
        )
    if expires_at is not None:
        expires_at = read_time(expires_at, "expires_at")
        if expires_at <= timezone.now():
            message = "expires_at must be in the future"
            raise InvalidRequest(message, details=[{"field": "expires_at"}])
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        context=context,
        name=name,
        key_prefix=raw[:10],
        key_hash=hash_token(raw),
        scope=scope,
        expires_at=expires_at,
    )
    return IssuedToken(token=token, raw=raw)


def revoke_token(token_id: int) -> None:
    """Revoke a token now (a token already revoked keeps its first revocation time)."""
    ApiToken.objects.filter(pk=token_id, revoked_at__isnull=True).update(revoked_at=timezone.now())
    forget_token(token_id)


# How long a token this process checked may be taken as known without the database, by a
# write that checks the token itself inside its own database transaction
# (`recently_authenticated`); also how often last use is recorded.
TOKEN_RECHECK_SECONDS = 60.0
_RECENT_MAX = 4096  # tokens remembered per process (least recently checked dropped first)
# key hash -> (monotonic time of the check, token id, the joined token and context row)
_recent: OrderedDict[str, tuple[float, int, tuple[Any, ...]]] = OrderedDict()
_recent_guard = threading.Lock()
_clock = time.monotonic  # a seam for tests


def authenticate_token(raw: str) -> ApiToken | None:
    """The live token for `raw` (with its context loaded), or None.

    Runs on every API request, so it is one hand-written join instead of an ORM query;
    last use is recorded at most once a minute."""
    if not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
        return None
    key_hash = hash_token(raw)
    row = fetch_one_prepared(statements("memory")["live_token"], [key_hash])
    if row is None:
        with _recent_guard:
            _recent.pop(key_hash, None)
        return None
    token = _token_of(row)
    now = timezone.now()
    since = None if token.last_used_at is None else (now - token.last_used_at).total_seconds()
    if since is None or since > TOKEN_RECHECK_SECONDS:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    with _recent_guard:
        _recent[key_hash] = (_clock(), token.pk, row)
        _recent.move_to_end(key_hash)
        while len(_recent) > _RECENT_MAX:
            _recent.popitem(last=False)
    return token


def token_refusal(raw: str) -> str:
    """Why `authenticate_token` refused `raw`, as the 401's message: "token expired at
    <UTC time>", "token revoked", or "unknown token". Read only on the refusal path; the
    caller holds the secret, so naming its state tells nothing it could not find out."""
    row = None
    if raw.startswith(TOKEN_PREFIX) and len(raw) <= 200:
        row = fetch_one_prepared(statements("memory")["refused_token"], [hash_token(raw)])
    if row is not None and row[0] is not None:
        return "token revoked"
    if row is not None and row[1] is not None and row[1] <= timezone.now():
        return f"token expired at {row[1].astimezone(dt.UTC):%Y-%m-%dT%H:%M:%SZ}"
    return "unknown token"


def recently_authenticated(raw: str) -> ApiToken | None:
    """The token for `raw` as `authenticate_token` found it live in this process less than
    TOKEN_RECHECK_SECONDS ago, without asking the database; None when it did not (then
    call `authenticate_token`).

    The rows may be that old and the token may have been revoked since (in another process):
    only a write that checks the token inside its own database transaction may act on it
    (`submit_transaction(token_id=...)`, which refuses with TokenNotLive), and it may use
    the context's id and slug only. A new instance each call: requests share no objects."""
    if not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
        return None
    key_hash = hash_token(raw)
    with _recent_guard:
        found = _recent.get(key_hash)
    if found is None or _clock() - found[0] >= TOKEN_RECHECK_SECONDS:
        return None
    token = _token_of(found[2])
    return token if token.is_active else None  # expired since it was checked


def forget_token(token_id: int) -> None:
    """Drop the token from this process's recently checked tokens (after revoking it, or
    when a write found it no longer live)."""
    with _recent_guard:
        for key_hash, (_, cached_id, _) in list(_recent.items()):
            if cached_id == token_id:
                del _recent[key_hash]


def _token_of(row: tuple[Any, ...]) -> ApiToken:
    """The token and its context from a `live_token` row: the two tables share column names
    (id, name, created_at), so the row is split after the token's columns."""
    token = ApiToken.from_db("default", list(TOKEN_ALL), row[: len(TOKEN_ALL)])
    token.context = Context.from_db("default", list(CONTEXT_ALL), row[len(TOKEN_ALL) :])
    return token


def send_token_check(token_id: int, context_id: int) -> Callable[[], bool]:
    """Ask whether the token is live and still belongs to the context, inside an open
    pipeline without waiting (`memory.hotsql.pipeline`); returns a function reading the
    answer. Inside the writing transaction, so a revocation committed before it is seen."""
    cur = bound_cursor()
    cur.execute(statements("memory")["token_is_live"], [token_id, context_id], prepare=True)

    def read() -> bool:
        with connection.wrap_database_errors, cur:
            return cur.fetchone() is not None

    return read


def token_is_live(token_id: int, context_id: int) -> bool:
    """`send_token_check` answered at once (one round trip)."""
    return (
        fetch_one_prepared(statements("memory")["token_is_live"], [token_id, context_id])
        is not None
    )
