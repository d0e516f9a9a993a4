"""Where a model behind an API may be called and which environment variable may hold its key: what the
operator allowed in the settings (README "Models behind an API", config/settings.py).

A model's key is sent as a Bearer token to its endpoint, so the variable it names must be one the
operator declared for API keys (`API_KEY_ENV_PREFIX`, `API_KEY_ENVS`), never SECRET_KEY or
DATABASE_URL; and the endpoint's host must be one the operator allowed (`API_HOSTS`), on a public
address unless `API_ALLOW_PRIVATE` is on, so that registering a model cannot make the server knock on
its own database, broker or neighbours. Registering, editing and probing a model check this
(`check_target`), and so does every chunk before it sends a request (`apiscoring.endpoint_of`).
"""
from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import urlsplit

from django.conf import settings

from core.errors import Code

from .errors import RunError
from .models import API_KEY_ENV_PATTERN

KEY_ENV_NOT_ALLOWED = Code.KEY_ENV_NOT_ALLOWED
ENDPOINT_NOT_ALLOWED = Code.ENDPOINT_NOT_ALLOWED


def key_env_allowed(name: str) -> bool:
    prefix = settings.API_KEY_ENV_PREFIX
    return bool(name) and ((bool(prefix) and name.startswith(prefix)) or name in settings.API_KEY_ENVS)


def check_key_env(name: str) -> None:
    """RunError unless `name` (empty: no key) is an environment variable the operator declared for API keys."""
    if not name:
        return
    if not re.match(API_KEY_ENV_PATTERN, name):
        raise RunError(Code.BAD_KEY_ENV, f"api_key_env must name an environment variable, got {name!r} "
                                         "(give the variable's name, never the key)")
    if not key_env_allowed(name):
        declared = [f"{settings.API_KEY_ENV_PREFIX}*"] if settings.API_KEY_ENV_PREFIX else []
        declared += settings.API_KEY_ENVS
        raise RunError(KEY_ENV_NOT_ALLOWED, f"api_key_env {name} is not a variable declared for API keys; the "
                                            f"operator declares them with HB_API_KEY_ENV_PREFIX and HB_API_KEY_ENVS "
                                            f"(now: {', '.join(declared) or 'none'})")


def host_allowed(host: str) -> bool:
    host = host.lower().rstrip(".")
    for allowed in settings.API_HOSTS:
        if allowed == "*" or allowed == host or (allowed.startswith("*.") and host.endswith(allowed[1:])):
            return True
    return False


def _addresses(host: str, port: int) -> set:
    try:
        found = {ipaddress.ip_address(info[4][0].split("%")[0])
                 for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}
    except (socket.gaierror, UnicodeError, ValueError):
        return set()
    # An IPv4 address written as IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it is.
    return {getattr(address, "ipv4_mapped", None) or address for address in found}


def check_endpoint(url: str) -> None:
    """RunError unless `url` is an http(s) URL whose host the operator allowed and whose addresses are all
    public (or private ones are allowed). The refusal names the rule, never anything found at the address."""
    parts = urlsplit(url or "")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = None
    if parts.scheme not in ("http", "https") or not parts.hostname or port is None or parts.username \
            or parts.password:
        raise RunError(Code.BAD_ENDPOINT, f"endpoint must be an http(s) URL up to /v1 without credentials, got "
                                          f"{url!r}")
    host = parts.hostname
    if not host_allowed(host):
        raise RunError(ENDPOINT_NOT_ALLOWED, f"endpoint host {host} is not allowed; the operator allows hosts with "
                                             "HB_API_HOSTS")
    addresses = _addresses(host, port)
    if not addresses:
        raise RunError(ENDPOINT_NOT_ALLOWED, f"endpoint host {host} does not resolve to an address")
    if not settings.API_ALLOW_PRIVATE and any(not address.is_global for address in addresses):
        raise RunError(ENDPOINT_NOT_ALLOWED, f"endpoint host {host} is on a private, loopback or reserved address; "
                                             "the operator allows those with HB_API_ALLOW_PRIVATE=1")


def check_target(endpoint: str, key_env: str) -> None:
    """Both rules: the key's variable, then the endpoint."""
    check_key_env(key_env)
    check_endpoint(endpoint)
