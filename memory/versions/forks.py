"""Forks (R53): an independent context whose history and state equal the source's at a point.

How it works: docs/internals.md, section `memory/versions/forks.py`."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, IntegrityError, connection, transaction

from memory.contexts import (
    SETTINGS_FIELDS,
    IssuedToken,
    check_slug,
    check_slug_free,
    hash_token,
    issue_token,
    settings_of,
)
from memory.errors import Conflict, ErrorCode, InvalidRequest, NotFound
from memory.idempotency import reused
from memory.models import ApiToken, Context, ForkReceipt
from memory.search.indexer import flush_pending_entries
from memory.shapes.versions import ForkJson
from memory.sql import named_row, statements
from memory.versions.fork_copy import copy_statements
from memory.versions.points import as_of_sql, resolve_point

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ForkResult:
    context: Context
    token: IssuedToken
    source_slug: str
    version: int
    tick: int
    # True when an idempotency key found an earlier fork: this is its first answer again,
    # and nothing was written.
    replayed: bool = False

    def as_dict(self) -> ForkJson:
        """The API's answer: slug, token (shown once), forked_from {slug, version, tick},
        and the new context's version and tick."""
        return {
            "slug": self.context.slug,
            "token": self.token.raw,
            "forked_from": {"slug": self.source_slug, "version": self.version, "tick": self.tick},
            "version": self.context.version,
            "tick": self.context.tick,
        }


def _new_slug(source_slug: str) -> str:
    return f"{source_slug[:50]}-fork-{secrets.token_hex(3)}"


def _check_arguments(slug: str | None, name: str | None) -> None:
    if slug is not None:
        check_slug(slug)
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise InvalidRequest(
            "name must not be empty: leave it out for the default name",
            details=[{"field": "name"}],
        )


def fork_context(
    source: Context | int,
    *,
    slug: str | None = None,
    at_version: Any = None,
    name: str | None = None,
    token_name: str = "fork",
    idempotency_key: str | None = None,
    caller_secret: bytes | None = None,
) -> ForkResult:
    """Fork `source` at `at_version` (default: now) into a new context `slug`, named `name`
    (None: `<source name> (fork at vN)`; an empty or blank name is InvalidRequest, not the
    default).

    With `idempotency_key` (and `caller_secret`, the caller's own credential: its raw API
    token), a retry of a fork whose answer was lost gets the same fork and the same token;
    the key with other arguments, or from another caller, is Conflict
    `idempotency_key_reused`. See `seal_token` for how the token is kept. A retry's result
    is `replayed`."""
    source_pk = source.pk if isinstance(source, Context) else source
    request = {"slug": slug, "at_version": at_version, "name": name}
    if idempotency_key is not None:
        if caller_secret is None:
            raise ValueError("an idempotency key needs the caller's secret")
        again = _fork_again(source_pk, idempotency_key, request, caller_secret)
        if again is not None:
            return again
    _check_arguments(slug, name)
    try:
        with transaction.atomic():
            forked = _fork(source_pk, slug, at_version, name, token_name)
            if idempotency_key is not None:
                assert caller_secret is not None
                _keep_receipt(source_pk, idempotency_key, request, forked, caller_secret)
    except IntegrityError as exc:
        if idempotency_key is not None and caller_secret is not None:
            # The same key, committed by a concurrent request meanwhile: its answer.
            again = _fork_again(source_pk, idempotency_key, request, caller_secret)
            if again is not None:
                return again
        if slug is not None and Context.objects.filter(slug__iexact=slug).exists():
            raise InvalidRequest(
                f"a context with slug {slug!r} already exists (whatever its case)",
                code=ErrorCode.CONTEXT_EXISTS,
            ) from None
        raise exc
    # The fork's search documents were copied by SQL, not by the indexer: merge them into
    # the word index now, as the indexer does when it catches up (memory.search.indexer).
    # The fork has committed, and its token is shown once: a failure here only leaves the
    # merge to the indexer or VACUUM, it must not turn the fork into an error.
    try:
        flush_pending_entries()
    except DatabaseError:
        log.warning(
            "fork %s: the word index's pending entries were not merged", forked.context.slug
        )
    return forked


def _fork(
    source_pk: int, slug: str | None, at_version: Any, name: str | None, token_name: str
) -> ForkResult:
    # Share lock: writers of the source (which take FOR UPDATE) wait until the copy is done.
    with connection.cursor() as cur:
        cur.execute(statements("memory.versions")["share_context"], {"ctx": source_pk})
        locked = named_row(cur)
    src = Context.objects.filter(pk=source_pk).first() if locked else None
    if src is None:
        raise NotFound(f"context {source_pk} does not exist")
    point = resolve_point(src, src.version if at_version is None else at_version, "at_version")
    params = point.params()
    at: dict[str, Any] = {}
    if not point.present:
        with connection.cursor() as cur:
            cur.execute(as_of_sql("context_at"), params)
            at = named_row(cur) or {}
    src_settings = settings_of(src) if point.present else at  # the settings at the point
    new_slug = slug or _new_slug(src.slug)
    check_slug_free(new_slug)
    dst = Context(
        slug=new_slug,
        name=name or f"{src.name or src.slug} (fork at v{point.version})",
        version=point.version,
        tick=point.tick,
        last_seq=point.last_seq,
        **{name: src_settings[name] for name in SETTINGS_FIELDS},
        used_tokens=src.used_tokens if point.present else at["used_tokens"],
        in_maintenance=src.in_maintenance if point.present else at["in_maintenance"],
        frozen=False,
        forked_from=src,
        forked_version=point.version,
        forked_tick=point.tick,
    )
    with connection.cursor() as cur:
        cur.execute(statements("memory.versions")["copying_on"])
        dst.save(force_insert=True)
        params["dst"] = dst.pk
        for sql in copy_statements(point):
            cur.execute(sql, params)
        cur.execute(statements("memory.versions")["copying_off"])
    token = issue_token(dst, name=token_name)
    return ForkResult(dst, token, src.slug, point.version, point.tick)


# -- forks under an idempotency key --------------------------------------------------------
# The fork's token is shown once and stored only as a hash; to answer a retry with it, the
# receipt keeps it sealed: XORed with a one-time pad drawn from HMAC-SHA256 keyed by the
# caller's own credential (its raw API token, which the server never stores) over the
# source and the key. The database alone cannot give it back, only a caller presenting
# the same credential and key can; each (credential, source, key) seals one token once.


def _pad(caller_secret: bytes, source_pk: int, key: str, length: int) -> bytes:
    label = f"morphz-fork-token\0{source_pk}\0{key}".encode()
    blocks = b""
    counter = 0
    while len(blocks) < length:
        blocks += hmac.new(caller_secret, label + bytes([counter]), hashlib.sha256).digest()
        counter += 1
    return blocks[:length]


def seal_token(raw: str, caller_secret: bytes, source_pk: int, key: str) -> bytes:
    """`raw` sealed for the caller holding `caller_secret` (see above); `unseal_token`
    reverses it."""
    data = raw.encode()
    pad = _pad(caller_secret, source_pk, key, len(data))
    return bytes(a ^ b for a, b in zip(data, pad, strict=True))


def unseal_token(sealed: bytes, caller_secret: bytes, source_pk: int, key: str) -> str | None:
    """The raw token `seal_token` sealed for `caller_secret`, or None when these bytes do
    not unseal to text (another caller's secret): the caller is then not the one it was
    sealed for. Never raises on foreign bytes."""
    pad = _pad(caller_secret, source_pk, key, len(sealed))
    try:
        return bytes(a ^ b for a, b in zip(sealed, pad, strict=True)).decode()
    except UnicodeDecodeError:
        return None


def _keep_receipt(
    source_pk: int, key: str, request: dict[str, Any], forked: ForkResult, secret: bytes
) -> None:
    ForkReceipt.objects.create(
        source_id=source_pk,
        key=key,
        fork=forked.context,
        request=request,
        sealed_token=seal_token(forked.token.raw, secret, source_pk, key),
    )


def _fork_again(
    source_pk: int, key: str, request: dict[str, Any], secret: bytes
) -> ForkResult | None:
    """The first answer of a fork made under `key`, or None when there is none."""
    receipt = (
        ForkReceipt.objects.select_related("fork", "source").filter(source_id=source_pk, key=key)
    ).first()
    if receipt is None:
        return None
    field = [{"field": "idempotency_key"}]
    if receipt.request != request:
        raise reused(key, "another fork of this context", field)
    raw = unseal_token(bytes(receipt.sealed_token), secret, source_pk, key)
    token = (
        ApiToken.objects.filter(context=receipt.fork, key_hash=hash_token(raw)).first()
        if raw is not None
        else None
    )
    if token is None or raw is None:
        raise reused(key, "a fork by another caller", field)
    if token.revoked_at is not None:
        raise Conflict(
            f"the fork made under idempotency key {key!r} exists, but its token was revoked",
            code=ErrorCode.IDEMPOTENCY_KEY_REUSED,
            details=field,
        )
    fork = receipt.fork
    return ForkResult(
        fork,
        IssuedToken(token=token, raw=raw),
        receipt.source.slug,
        int(fork.forked_version or 0),
        int(fork.forked_tick or 0),
        replayed=True,
    )
