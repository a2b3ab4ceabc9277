"""Login rate limiting: at most LIMIT failed logins per user name and client address in WINDOW seconds.

Covers the dashboard login (`login`), the API token endpoint (`api-token`) and the Django admin login.
Over the limit, the next attempt is refused with 429 and `Retry-After` before the password is checked,
until the oldest failure of the window is WINDOW seconds old. A successful login clears the count.

Failures are counted from Django's `user_login_failed` signal (sent by `authenticate()`), so
refused attempts do not extend the lock. The counts live in the `ratelimit` cache (Redis, shared by
every web process); while Redis is unreachable they fall back to this process's memory (logged once
per outage), which still limits, per process. The client address is REMOTE_ADDR: behind a reverse
proxy, have the proxy set it (X-Forwarded-For is not trusted, anyone can send it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import BaseCache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.response import TemplateResponse

log = logging.getLogger(__name__)
T = TypeVar("T")

LIMIT = 5
WINDOW = 300  # seconds
CACHE_ALIAS = "ratelimit"
_OUTAGE_SECONDS = 30  # after a cache error, use memory for this long before trying Redis again
# view name -> how to answer when refused
GUARDED = {"api-token": "json", "login": "html", "admin:login": "html"}
LOGIN_TEMPLATE = "frontend/login.html"
_ATTEMPT = "_mirrorplane_login_attempt"  # the request's attribute: (answer, username, address) of a login

_local = LocMemCache("mirrorplane-ratelimit-fallback", {"TIMEOUT": WINDOW, "OPTIONS": {"MAX_ENTRIES": 100_000}})
_shared_down_until = 0.0


def _cache() -> BaseCache:
    if time.monotonic() < _shared_down_until:
        return _local
    return caches[CACHE_ALIAS if CACHE_ALIAS in settings.CACHES else "default"]


def _with_cache(operation: Callable[[BaseCache], T]) -> T:
    global _shared_down_until
    cache = _cache()
    try:
        return operation(cache)
    except Exception as error:  # any cache failure: fall back, never fail the login page
        if cache is _local:
            raise
        log.warning("login rate limit: cache unavailable (%s), counting in this process for %d s",
                    error, _OUTAGE_SECONDS)
        _shared_down_until = time.monotonic() + _OUTAGE_SECONDS
        return operation(_local)


def _key(username: str, address: str) -> str:
    digest = hashlib.sha256(f"{username.strip().casefold()}\0{address}".encode()).hexdigest()
    return f"login-failures:{digest}"


def client_address(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR") or "unknown"


def _recent(cache: BaseCache, key: str, now: float) -> list[float]:
    return [t for t in cache.get(key) or [] if now - t < WINDOW]


def retry_after(username: str, address: str) -> int:
    """Seconds until this user name may try again from this address; 0: now."""
    now = time.time()
    recent = _with_cache(lambda cache: _recent(cache, _key(username, address), now))
    if len(recent) < LIMIT:
        return 0
    return max(1, int(recent[-LIMIT] + WINDOW - now + 0.999))


def record_failure(username: str, address: str) -> None:
    now = time.time()
    key = _key(username, address)

    def record(cache: BaseCache) -> None:
        cache.set(key, [*_recent(cache, key, now), now][-LIMIT:], timeout=WINDOW)

    _with_cache(record)


def reset(username: str, address: str) -> None:
    key = _key(username, address)
    _with_cache(lambda cache: cache.delete(key))


def clear() -> None:
    """Forget every count in this process's fallback (tests); the shared cache is cleared by its alias."""
    _local.clear()


@receiver(user_login_failed, dispatch_uid="mirrorplane-login-failed")
def _count_failure(sender, credentials: dict, request=None, **kwargs) -> None:
    username = credentials.get("username")
    if request is not None and isinstance(username, str):
        record_failure(username, client_address(request))


@receiver(user_logged_in, dispatch_uid="mirrorplane-logged-in")
def _clear_on_login(sender, request=None, user=None, **kwargs) -> None:
    if request is not None and user is not None:
        reset(user.get_username(), client_address(request))


def _username(request: HttpRequest) -> str:
    if request.content_type == "application/json":
        try:
            data = json.loads(request.body or b"{}")
        except (ValueError, UnicodeDecodeError):
            return ""
        value = data.get("username") if isinstance(data, dict) else None
        return value if isinstance(value, str) else ""
    return request.POST.get("username", "")


class LoginRateLimitMiddleware:
    """Refuses login attempts over the limit (429 + Retry-After); put it after the CSRF middleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        attempt = getattr(request, _ATTEMPT, None)
        if attempt is not None and response.status_code == 200 and attempt[0] == "json":
            reset(attempt[1], attempt[2])  # a token was issued (the session login clears via user_logged_in)
        return response

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        if request.method != "POST" or request.resolver_match is None:
            return None
        answer = GUARDED.get(request.resolver_match.view_name)
        if answer is None:
            return None
        username, address = _username(request), client_address(request)
        setattr(request, _ATTEMPT, (answer, username, address))
        wait = retry_after(username, address)
        if not wait:
            return None
        log.warning("login rate limit: refusing a login from %s for %d s", address, wait)
        message = (f"too many failed logins for this user from your address ({LIMIT} in {WINDOW // 60} minutes): "
                   f"try again in {wait} s")
        response: HttpResponse
        if answer == "json":
            response = JsonResponse({"detail": message}, status=429)
        else:
            from django.contrib.auth.forms import AuthenticationForm

            response = TemplateResponse(request, LOGIN_TEMPLATE, {
                "form": AuthenticationForm(request), "rate_limited": message,
                "next": request.POST.get("next", "")}, status=429)
        response["Retry-After"] = str(wait)
        return response
