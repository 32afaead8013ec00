from __future__ import annotations

import threading
import time
from typing import Any

from rest_framework.throttling import SimpleRateThrottle

# The cache is LocMemCache (per process): this lock makes read-and-update exact per process.
_lock = threading.Lock()


class ContextTokenRateThrottle(SimpleRateThrottle):
    """Requests per token (agents) or per user (people), as a token bucket.

    A caller may send `num_requests` at once and then one every `duration / num_requests`
    seconds. The bucket is one number per caller (when it will be full again), where DRF's
    own throttle keeps and rewrites a list of every request time in the window: at thousands
    of requests a minute that list made each request slower the busier a caller was.
    """

    scope = "context_token"
    num_requests: int  # set from the rate by SimpleRateThrottle.__init__
    duration: int

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        token = getattr(request, "auth", None)
        if token is not None and hasattr(token, "pk"):
            return f"throttle:token:{token.pk}"
        user = getattr(request, "user", None)
        if user is not None and getattr(user, "is_authenticated", False):
            return f"throttle:user:{user.pk}"
        return f"throttle:ip:{self.get_ident(request)}"

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        interval = self.duration / self.num_requests
        burst = self.duration - interval  # how far ahead of now the bucket may be drawn
        now = time.time()
        with _lock:
            full_at = max(float(self.cache.get(key, 0.0)), now)
            if full_at - now > burst:
                self._wait = full_at - now - burst
                return False
            self.cache.set(key, full_at + interval, self.duration)
        return True

    def wait(self) -> float | None:
        return getattr(self, "_wait", None)
