"""Where a model behind an API may be called and which environment variable may hold its key: what the
operator allowed in the settings (docs/model-runs.md "Models behind an API", config/settings.py).

A model's key is sent as a Bearer token to its endpoint, so the variable it names must be one the
operator declared for API keys (`API_KEY_ENV_PREFIX`, `API_KEY_ENVS`), never SECRET_KEY or
DATABASE_URL; and the endpoint's host must be one the operator allowed (`API_HOSTS`), on a public
address unless `API_ALLOW_PRIVATE` is on, so that registering a model cannot make the server knock on
its own database, broker or neighbours. Registering, editing and probing a model check this
(`check_target`), and so does every chunk before it sends a request (`apiscoring.endpoint_of`). Every
connection then goes to an address checked when it is made (`checked_addresses`, the HTTP client's resolver):
the name is resolved once, for the check and the connection both.

An IPv6 address that carries an IPv4 one (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64
64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo) is judged by the IPv4 addresses it carries: through
a translator or a tunnel, that is where it leads.
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
    if not re.fullmatch(API_KEY_ENV_PATTERN.strip("^$"), name):
        raise RunError(Code.BAD_KEY_ENV, f"api_key_env must name an environment variable, got {name!r} "
                                         "(give the variable's name, never the key)")
    if not key_env_allowed(name):
        declared = [f"{settings.API_KEY_ENV_PREFIX}*"] if settings.API_KEY_ENV_PREFIX else []
        declared += settings.API_KEY_ENVS
        raise RunError(KEY_ENV_NOT_ALLOWED, f"api_key_env {name} is not a variable declared for API keys; the "
                                            f"operator declares them with HB_API_KEY_ENV_PREFIX and HB_API_KEY_ENVS "
                                            f"(now: {', '.join(declared) or 'none'})")


def _allowed_entry(entry: str) -> tuple[str, int | None]:
    """An HB_API_HOSTS entry as (host, port or None for any port): "api.example.com", "*.example.com",
    "api.example.com:8443", "10.0.0.5:8000", "[fd00::5]:8000"."""
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif entry.count(":") == 1:
        host, port = entry.split(":")
    else:
        host, port = entry, ""
    return host.lower().rstrip("."), (int(port) if port.isdigit() else None)


def host_allowed(host: str, port: int | None = None) -> bool:
    """Whether the operator's HB_API_HOSTS allow this host (on this port, where an entry names one)."""
    host = host.lower().rstrip(".")
    for entry in settings.API_HOSTS:
        allowed, allowed_port = _allowed_entry(entry)
        if allowed_port is not None and port != allowed_port:
            continue
        if allowed == "*" or allowed == host or (allowed.startswith("*.") and host.endswith(allowed[1:])):
            return True
    return False


NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def judged(address) -> list:
    """The addresses whose kind decides whether `address` may be called: itself, or the IPv4 addresses an IPv6
    one carries (mapped, compatible, NAT64, 6to4, Teredo's server and client)."""
    if address.version == 4:
        return [address]
    if address.ipv4_mapped:
        return [address.ipv4_mapped]
    if address.sixtofour:
        return [address.sixtofour]
    if address.teredo:
        return list(address.teredo)
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if any(address in net for net in NAT64):
        return [low32]
    if address in IPV4_COMPATIBLE and int(address) > 1:  # :: and ::1 are IPv6's own (unspecified, loopback)
        return [low32]
    return [address]


def _addresses(host: str, port: int) -> list:
    """The host's addresses, in the resolver's order, each once."""
    try:
        found = [ipaddress.ip_address(info[4][0].split("%")[0])
                 for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]
    except (socket.gaierror, UnicodeError, ValueError):
        return []
    return list(dict.fromkeys(found))


def checked_addresses(host: str, port: int) -> list[str]:
    """The addresses a connection to host:port may use, resolved once and checked (RunError otherwise): the host
    is allowed and, unless private addresses are, every address it resolves to is public (as `judged`)."""
    if not host_allowed(host, port):
        raise RunError(ENDPOINT_NOT_ALLOWED, f"endpoint host {host} is not allowed on port {port}; the operator "
                                             "allows hosts with HB_API_HOSTS")
    addresses = _addresses(host, port)
    if not addresses:
        raise RunError(ENDPOINT_NOT_ALLOWED, f"endpoint host {host} does not resolve to an address")
    if not settings.API_ALLOW_PRIVATE and any(not seen.is_global for address in addresses
                                              for seen in judged(address)):
        raise RunError(ENDPOINT_NOT_ALLOWED, f"endpoint host {host} is on a private, loopback or reserved address; "
                                             "the operator allows those with HB_API_ALLOW_PRIVATE=1")
    return [str(address) for address in addresses]


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
    checked_addresses(parts.hostname, port)


def check_target(endpoint: str, key_env: str) -> None:
    """Both rules: the key's variable, then the endpoint."""
    check_key_env(key_env)
    check_endpoint(endpoint)
