"""The UI's HTTP side: a Starlette app of JSON endpoints over a `Workspace`, the page as static files, uvicorn.

Every endpoint answers JSON. Input the simulator refuses is a 400 with its message
(`{"error": ...}`), an unknown pod, node or object a 404; anything else a 500 with one
line, never a traceback. Changes need `Content-Type: application/json`; `guard.Guard`
checks the Host header, the origin of changes and, off loopback, the access token.
One change at a time: another one meanwhile is a 409, so no edit is made on top of a
state its sender has not seen.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kubesched.apiserver.documents import valid_strings
from kubesched.simulator.budget import Budget
from kubesched.startup import few_full_collections
from kubesched.ui.guard import (
    LOOPBACK_NAMES,
    Access,
    Guard,
    check_allowed_host,
    check_token,
    host_key,
    is_loopback,
    is_wildcard,
    new_token,
    server_names,
)
from kubesched.ui.workspace import InputError, Workspace

__all__ = ["create_app", "run"]

STATIC = Path(__file__).resolve().parent / "static"
TOKEN_ENV = "KUBESCHED_UI_TOKEN"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
log = logging.getLogger("kubesched.ui")

Work = Callable[[Request, dict[str, Any]], Any]


class BadRequest(ValueError):
    """A request the page should not send: a missing parameter, a number that is not one, a body too large."""


def create_app(
    workspace: Workspace,
    allowed_hosts: list[str] | None = None,
    *,
    token: str | None = None,
    cookie: str = "kubesched-ui-token",
) -> Starlette:
    """The app over `workspace`, answering Host `allowed_hosts` (None: the loopback names); `token`: needed if set."""
    ws = workspace
    changing = _OneChange()

    def apply(_: Request, body: dict[str, Any]) -> Any:
        changed = ws.apply(_text(body, "text"))
        return {"changed": changed, "state": ws.state()}

    def delete(r: Request, _: dict[str, Any]) -> Any:
        return {"deleted": ws.delete(_int(r, "id")), "state": ws.state()}

    def clone(_: Request, body: dict[str, Any]) -> Any:
        count = body.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool):
            raise BadRequest("count: expected a whole number")
        return {"created": ws.clone_node(_text(body, "name"), count), "state": ws.state()}

    def set_config(_: Request, body: dict[str, Any]) -> Any:
        ws.set_config(_text(body, "text"))
        return {"state": ws.state()}

    def rerun(_: Request, body: dict[str, Any]) -> Any:
        seed = body.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise BadRequest("seed: expected a whole number")
        ws.rerun(seed)
        return {"state": ws.state()}

    async def export(_: Request) -> Response:
        text = await run_in_threadpool(ws.export)
        headers = {**_headers(), "Content-Disposition": 'attachment; filename="kubesched-ui.yaml"'}
        return Response(text, media_type="application/yaml", headers=headers)

    routes = [
        Route("/", _index),
        Route("/api/state", _get(lambda r, _: ws.state())),
        Route(
            "/api/nodes",
            _get(lambda r, _: ws.nodes_page(_q(r, "zone"), _q(r, "q"), _q(r, "sort", "name"), *_window(r))),
        ),
        Route("/api/heatmap", _get(lambda r, _: ws.heatmap())),
        Route("/api/node", _get(lambda r, _: ws.node_detail(_required(r, "name")))),
        Route("/api/node/clone", _post(clone, changing), methods=["POST"]),
        Route(
            "/api/pods",
            _get(lambda r, _: ws.pods_page(_q(r, "status", "pending"), _q(r, "q"), _q(r, "node"), *_window(r))),
        ),
        Route("/api/pod", _get(lambda r, _: ws.pod_detail(_required(r, "key")))),
        Route(
            "/api/pod/record",
            _get(lambda r, _: ws.record_page(_required(r, "key"), _q(r, "show", "all"), _q(r, "q"), *_window(r))),
        ),
        Route(
            "/api/pod-groups",
            _get(lambda r, _: ws.pod_groups_page(_q(r, "state"), _q(r, "q"), *_window(r))),
        ),
        Route("/api/events", _get(lambda r, _: ws.events_page(_q(r, "type"), _q(r, "q"), *_window(r)))),
        Route("/api/pending-over-time", _get(lambda r, _: {"points": ws.pending_over_time()})),
        Route("/api/objects", _get(lambda r, _: ws.objects_page(_q(r, "kind"), _q(r, "q"), *_window(r)))),
        Route("/api/objects", _post(apply, changing), methods=["POST"]),
        Route("/api/object", _get(lambda r, _: ws.object_text(_int(r, "id")))),
        Route("/api/object", _endpoint(delete, change=changing), methods=["DELETE"]),
        Route("/api/export", export),
        Route("/api/config", _get(lambda r, _: ws.config_text())),
        Route("/api/config", _post(set_config, changing), methods=["PUT"]),
        Route("/api/rerun", _post(rerun, changing), methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    hosts = frozenset(host_key(h) for h in (LOOPBACK_NAMES if allowed_hosts is None else allowed_hosts))
    access = Access(hosts, token, cookie)
    app = Starlette(routes=routes, middleware=[Middleware(Guard, access=access)])
    app.router.redirect_slashes = False
    app.state.max_body = ws.budget.max_input_bytes  # a body carries one input: the same byte budget
    return app


async def _index(_: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers=_headers())


def _headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
    }


class _OneChange:
    """The change being simulated, if any: a second one meanwhile is refused rather than queued behind it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.what = ""
        self.since = 0.0

    def busy(self, request: Request) -> str:
        """'' after taking the turn for `request`; else why it cannot have it."""
        if not self._lock.acquire(blocking=False):
            return (
                f"another change ({self.what}) has been simulating for {time.monotonic() - self.since:.1f}s; "
                "nothing was changed: try again when it is done"
            )
        self.what, self.since = f"{request.method} {request.url.path}", time.monotonic()
        return ""

    def done(self) -> None:
        self._lock.release()


def _endpoint(
    work: Work, *, body: bool = False, change: _OneChange | None = None
) -> Callable[[Request], Awaitable[Response]]:
    """Run `work` in a thread (simulations take seconds); answer its result or its error as JSON."""

    async def endpoint(request: Request) -> Response:
        try:
            payload = await _body(request) if body else {}
            if change is None:
                result = await run_in_threadpool(work, request, payload)
            else:
                busy = change.busy(request)
                if busy:
                    return JSONResponse({"error": busy}, status_code=409, headers=_headers())
                try:
                    result = await run_in_threadpool(work, request, payload)
                finally:
                    change.done()
            return JSONResponse(result, headers=_headers())
        except _TooLarge as err:
            return JSONResponse({"error": str(err)}, status_code=413, headers=_headers())
        except (InputError, BadRequest) as err:
            return JSONResponse({"error": str(err)}, status_code=400, headers=_headers())
        except KeyError as err:
            message = err.args[0] if err.args and isinstance(err.args[0], str) else "not found"
            return JSONResponse({"error": message}, status_code=404, headers=_headers())
        except _Unsupported as err:
            return JSONResponse({"error": str(err)}, status_code=415, headers=_headers())
        except Exception as err:  # a bug: one line for the page and the log, no traceback
            log.error("internal error on %s %s: %s: %s", request.method, request.url.path, type(err).__name__, err)
            return JSONResponse({"error": f"internal error: {type(err).__name__}: {err}"}, status_code=500)

    return endpoint


def _get(work: Work) -> Callable[[Request], Awaitable[Response]]:
    return _endpoint(work)


def _post(work: Work, change: _OneChange) -> Callable[[Request], Awaitable[Response]]:
    return _endpoint(work, body=True, change=change)


class _Unsupported(ValueError):
    """A change sent as anything but JSON."""


class _TooLarge(ValueError):
    """A body over the input budget: refused on its Content-Length before it is read, or as it streams in."""


async def _body(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise _Unsupported("send changes as JSON (Content-Type: application/json)")
    limit: int = request.app.state.max_body
    too_large = _TooLarge(
        f"request body over the input budget of {limit:,} bytes (--max-input-bytes); "
        "start kubesched ui with --max-input-bytes N to raise it"
    )
    declared = request.headers.get("content-length")
    if declared is not None:
        if not (declared.strip().isascii() and declared.strip().isdigit()):
            raise BadRequest(f"Content-Length: expected a number of bytes, got {declared!r}")
        if int(declared) > limit:
            raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    try:
        doc = json.loads(b"".join(chunks) or b"{}")
    except (ValueError, RecursionError) as err:
        raise BadRequest(f"request body: not JSON: {err}") from err
    if not isinstance(doc, dict):
        raise BadRequest("request body: expected a JSON object")
    return cast(dict[str, Any], valid_strings(doc))  # a lone surrogate escape: U+FFFD, as Go's JSON decoder gives


def _q(request: Request, name: str, default: str = "") -> str:
    return request.query_params.get(name, default)


def _required(request: Request, name: str) -> str:
    value = request.query_params.get(name)
    if not value:
        raise BadRequest(f"{name}: required")
    return value


def _int(request: Request, name: str, default: int | None = None) -> int:
    value = request.query_params.get(name)
    if value is None or value == "":
        if default is None:
            raise BadRequest(f"{name}: required")
        return default
    try:
        return int(value)
    except ValueError as err:
        raise BadRequest(f"{name}: expected a whole number, got {value!r}") from err


def _window(request: Request) -> tuple[int, int]:
    return _int(request, "offset", 0), _int(request, "limit", 100)


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise BadRequest(f"{name}: expected text")
    return value


# ---------------------------------------------------------------------- the command


def run(
    files: list[str],
    *,
    config: str | None = None,
    overlays: list[str] | None = None,
    host: str = "127.0.0.1",
    port: int = 8080,
    open_browser: bool = True,
    seed: int = 1,
    until: float | None = None,
    bind_latency: float = 0.0,
    allowed_host: list[str] | None = None,
    token: str | None = None,
    require_token: bool = False,
    budget: Budget | None = None,
    kubernetes_version: str | None = None,
    feature_gates: str = "",
) -> int:
    """`kubesched ui`: simulate FILES, then serve the page until Ctrl-C. 2 for unusable input or address.

    `overlays` replace objects of FILES as `kubesched simulate --overlay` does. `token` (else
    $KUBESCHED_UI_TOKEN, else a random one) is needed off loopback, and on loopback when given or `require_token`.
    """
    # It holds every manifest and the last simulation, which each full collection would walk.
    with few_full_collections():
        return _serve(
            files,
            config,
            overlays or [],
            host,
            port,
            open_browser,
            {
                "seed": seed,
                "until": until,
                "bind_latency": bind_latency,
                "budget": budget,
                "kubernetes_version": kubernetes_version,
                "feature_gates": feature_gates,
            },
            allowed_host or [],
            token,
            require_token,
        )


def _serve(
    files: list[str],
    config: str | None,
    overlays: list[str],
    host: str,
    port: int,
    open_browser: bool,
    simulation: dict[str, Any],
    extra_hosts: list[str],
    token: str | None,
    require_token: bool,
) -> int:
    import uvicorn

    if not 0 <= port <= 65535:
        return _refuse(f"--port: {port} is not a port number")
    try:
        extra = [check_allowed_host(name) for name in extra_hosts]
    except ValueError as err:
        return _refuse(f"--allowed-host: {err}")
    source = "--token" if token is not None else TOKEN_ENV
    given = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
    try:
        given = given if given is None else check_token(given)
    except ValueError as err:
        return _refuse(f"{source}: {err}")
    try:
        workspace = Workspace.from_files(files, config, overlays=overlays, **simulation)
    except InputError as err:
        print(f"kubesched: {err}", file=sys.stderr)
        return 2
    try:
        sock = _listen(host, port)
    except OSError as err:
        return _refuse(f"cannot listen on {host}:{port}: {err.strerror or err}")
    loopback = is_loopback(host)
    secret = given or (new_token() if require_token or not loopback else None)
    if not loopback:
        print(
            f"kubesched: ui: warning: serving on {host} over plain HTTP: whoever has the token can read and edit, "
            "and whoever can watch the network can read the token",
            file=sys.stderr,
        )
    bound = sock.getsockname()[1]
    shown = socket.gethostname() if is_wildcard(host) else host
    url = f"http://{'[' + shown + ']' if ':' in shown else shown}:{bound}/" + (f"?token={secret}" if secret else "")
    state = workspace.state()
    counts = state["counts"]
    print(
        f"kubesched: ui: {url} ({counts['nodes']} nodes, {counts.get('pending', 0)} pods pending; "
        f"simulated in {state['seconds']['wall']:.1f}s); Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    app = create_app(workspace, sorted(server_names(host, extra)), token=secret, cookie=f"kubesched-ui-{bound}")
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=1)
    )
    if open_browser:
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    server.run(sockets=[sock])
    return 0


def _refuse(message: str) -> int:
    print(f"kubesched: ui: {message}", file=sys.stderr)
    return 2


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock
