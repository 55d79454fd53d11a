"""Who may talk to `kubesched ui`: the Host names it answers to, the same-origin rule for changes, the token.

A page on another site can make a browser send requests to this server (on loopback or
not), and DNS rebinding can even make them look same-origin to the browser; so every
request must name this server in its Host header, every change must come from this
server's own page (Origin, Sec-Fetch-Site) or from a client that sends neither (curl,
scripts), and off loopback every request must carry the access token printed at start.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "LOOPBACK_NAMES",
    "Access",
    "Guard",
    "host_key",
    "server_names",
    "check_allowed_host",
    "check_token",
    "is_loopback",
    "is_wildcard",
    "machine_names",
    "new_token",
]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SAME_ORIGIN_FETCH = frozenset({"same-origin", "none"})
"""`Sec-Fetch-Site` values of this server's own page or of the user typing a URL; anything else is another site."""
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9._~-]{16,}")
HOST_PATTERN = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*")
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
LOGIN_CSP = "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"


@dataclass(frozen=True)
class Access:
    """The Host names this server answers to and its token (None: no token needed, loopback's default)."""

    hosts: frozenset[str]
    token: str | None = None
    cookie: str = "kubesched-ui-token"


def is_wildcard(host: str) -> bool:
    """0.0.0.0 or ::, which listen on every address, loopback included."""
    return host in ("", "0.0.0.0", "::")


def is_loopback(host: str) -> bool:
    """Only this machine can connect: no token is needed by default."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def machine_names(host: str) -> set[str]:
    """Names a browser elsewhere may use for this server: the address it listens on, the host's names and addresses."""
    names = {host_key(host)}
    if is_wildcard(host):
        names |= LOOPBACK_NAMES
    try:
        hostname = socket.gethostname()
        names |= {hostname.lower(), socket.getfqdn(hostname).lower()}
    except OSError:
        return names
    for name in list(names):
        try:
            for info in socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP):
                names.add(host_key(str(info[4][0])))
        except (OSError, UnicodeError):
            continue
    names.discard("")
    return names


def check_allowed_host(name: str) -> str:
    """An --allowed-host value: a DNS name or an address, without port; as compared. ValueError says why not."""
    if _is_address(name) or (len(name) <= 253 and HOST_PATTERN.fullmatch(name)):
        return host_key(name)
    raise ValueError(f"{name!r} is not a host name or address (no scheme, port or path)")


def check_token(token: str) -> str:
    """A token given on the command line or in the environment: too long to guess, safe in a URL."""
    if not TOKEN_PATTERN.fullmatch(token):
        raise ValueError(f"expected at least 16 letters, digits or any of - . _ ~ (got {len(token)} characters)")
    return token


def new_token() -> str:
    """256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


class Guard:
    """ASGI middleware in front of the whole app (pages, static files, API): Host, then origin, then token."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the UI has none; refused before any check could be skipped
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        response = self._refusal(scope)
        if response is None:
            await self.app(scope, receive, send)
        else:
            await response(scope, receive, send)

    def _refusal(self, scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not self._host_allowed(host, scope):
            shown = host or "(none)"
            return _error(
                400,
                f"Host {shown!r} does not name this server; "
                "if it is one of its names, start kubesched ui with --allowed-host NAME",
            )
        if scope["method"] not in SAFE_METHODS:
            reason = _cross_site(headers, host)
            if reason:
                return _error(403, f"refused a change from another site ({reason}); make it in the kubesched ui page")
        if self.access.token is None:
            return None
        return self._token_refusal(scope, headers, self.access.token)

    def _host_allowed(self, host: str, scope: Scope) -> bool:
        name = host_key(_host_part(host))
        if not name:
            return False
        if name in self.access.hosts:
            return True
        server = scope.get("server")
        # The address the client connected to, typed as a literal (http://10.1.2.3:8080/): this server's own origin.
        return server is not None and _is_address(name) and host_key(str(server[0])) == name

    def _token_refusal(self, scope: Scope, headers: Headers, token: str) -> Response | None:
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        offered = [v for k, v in query if k == "token"]
        if offered and scope["method"] in ("GET", "HEAD"):
            if not _same(offered[-1], token):
                return self._login(scope, "that token is not this server's")
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            path = scope["path"] if scope["path"].startswith("/") and not scope["path"].startswith("//") else "/"
            redirect = RedirectResponse(path + (f"?{rest}" if rest else ""), status_code=303, headers=HEADERS)
            redirect.set_cookie(self.access.cookie, token, httponly=True, samesite="strict", path="/")
            return redirect
        scheme, _, credential = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and _same(credential.strip(), token):
            return None
        cookie = cookie_parser(headers.get("cookie", "")).get(self.access.cookie)
        if cookie is not None and _same(cookie, token):
            return None
        return self._login(scope, "")

    def _login(self, scope: Scope, problem: str) -> Response:
        """401: the page's own address answers a form for the token; everything else one line of JSON."""
        say = (problem + "; " if problem else "") + (
            "this kubesched ui needs its access token: open the URL it printed at start (…/?token=…) "
            "or send Authorization: Bearer TOKEN"
        )
        challenge = {**HEADERS, "WWW-Authenticate": 'Bearer realm="kubesched ui"'}
        if scope["method"] == "GET" and scope["path"] == "/":
            return HTMLResponse(
                _LOGIN_PAGE.format(problem=f"<p><strong>{problem}.</strong></p>" if problem else ""),
                status_code=401,
                headers={**challenge, "Content-Security-Policy": LOGIN_CSP},
            )
        return JSONResponse({"error": say}, status_code=401, headers=challenge)


_LOGIN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kubesched ui: access token</title></head>
<body>
<h1>kubesched ui</h1>
{problem}<p>This server needs its access token. Open the address <code>kubesched ui</code> printed when it started
(it ends in <code>?token=…</code>), or paste the token here.</p>
<form method="get" action="/"><label>token <input name="token" type="password" autocomplete="off" required></label>
<button type="submit">Open</button></form>
</body></html>
"""


def _cross_site(headers: Headers, host: str) -> str:
    """Why a change comes from another site's page ('' if it does not): Sec-Fetch-Site, then Origin."""
    site = headers.get("sec-fetch-site")
    if site is not None and site.lower() not in SAME_ORIGIN_FETCH:
        return f"Sec-Fetch-Site: {site}"
    origin = headers.get("origin")
    if origin is None:
        return ""
    parts = urlsplit(origin)
    if origin == "null" or parts.scheme not in ("http", "https") or parts.netloc.lower() != host.lower():
        return f"Origin: {origin}"
    return ""


def _host_part(host: str) -> str:
    """The name of a Host header without its port: `[::1]:8080` → `[::1]`, `example:80` → `example`."""
    if host.startswith("["):
        end = host.find("]")
        rest = host[end + 1 :]
        if end < 0 or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return ""
        return host[: end + 1]
    name, colon, port = host.rpartition(":")
    if not colon:
        return host
    return name if port.isdigit() and ":" not in name else ""


def _is_address(name: str) -> bool:
    bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        return False
    return True


def host_key(host: str) -> str:
    """A host as compared: lower case; an address in its canonical form (no brackets, zone or IPv4 mapping)."""
    host = host.lower()
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        address = ipaddress.ip_address(bare.split("%")[0])
    except ValueError:
        return host
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped or address)


def _same(offered: str, token: str) -> bool:
    """Constant-time, and on bytes: compare_digest refuses non-ASCII text, which an attacker may send."""
    return hmac.compare_digest(offered.encode("utf-8", "replace"), token.encode())


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status, headers=HEADERS)


def server_names(host: str, extra: Iterable[str]) -> frozenset[str]:
    """The allow-list for a server on `host`: loopback names on loopback, the machine's names otherwise; plus extra."""
    names = (LOOPBACK_NAMES | {host_key(host)}) if is_loopback(host) else machine_names(host)
    return frozenset(names | {host_key(e) for e in extra})
