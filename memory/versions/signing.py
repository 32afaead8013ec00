"""Signed exports (R65): an export's lines carry an HMAC-SHA256 under a key of the server.

How it works: docs/internals.md, section `memory/versions/signing.py`."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from django.conf import settings

from memory.errors import ErrorCode, MorphzError


def keys() -> list[bytes]:
    """The signing keys, the one that signs first."""
    configured = [k.strip().encode() for k in getattr(settings, "MORPHZ_EXPORT_KEYS", []) if k]
    if configured:
        return configured
    derived = hmac.new(settings.SECRET_KEY.encode(), b"morphz export signing", hashlib.sha256)
    return [derived.hexdigest().encode()]


def key_id(key: bytes) -> str:
    """The id a file names its key by: 16 hex digits of the key's SHA-256."""
    return hashlib.sha256(key).hexdigest()[:16]


class Signer:
    """HMACs of the lines under every key (the first signs; all verify)."""

    def __init__(self) -> None:
        self._macs = [(key_id(k), hmac.new(k, digestmod=hashlib.sha256)) for k in keys()]

    def update(self, data: bytes) -> None:
        """Add the next line's bytes."""
        for _kid, mac in self._macs:
            mac.update(data)

    def signature(self) -> dict[str, str]:
        """The signature with the signing (first) key."""
        kid, mac = self._macs[0]
        return {"key": kid, "hmac": mac.hexdigest()}

    def verify(self, signature: Any) -> bool:
        """Whether `signature` (from a closing line) is this content's under any known key."""
        if not isinstance(signature, dict):
            return False
        kid, given = signature.get("key"), signature.get("hmac")
        if not isinstance(kid, str) or not isinstance(given, str):
            return False
        return any(
            k == kid and hmac.compare_digest(mac.hexdigest(), given) for k, mac in self._macs
        )


class UnverifiedExport(MorphzError):
    """No key of this server signed the export (or it was changed since)."""

    code = ErrorCode.INVALID_SIGNATURE


def check_signature(exported: Any, allow_unverified: bool) -> None:
    """Refuse an export no key of this server signed, unless the caller (an admin, on
    purpose) allows an unverified import."""
    if not exported.verified and not allow_unverified:
        raise UnverifiedExport(
            "the export's signature does not verify with any key of this server (changed, "
            "or written by another server); an admin may import it explicitly as unverified"
        )
