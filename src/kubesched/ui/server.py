"""The UI's HTTP side: a Starlette app of JSON endpoints over a `Workspace`, the page as static files, uvicorn.

Every endpoint answers JSON. Input the simulator refuses is a 400 with its message
(`{"error": ...}`), an unknown pod, node or object a 404; anything else a 500 with one
line, never a traceback. Changes need `Content-Type: application/json`, which a page of
another site cannot send without asking first, and the Host header must name this
server (no DNS rebinding), so a page elsewhere cannot drive a server on loopback.
"""

from __future__ import annotations

import gc
import json
import logging
import socket
import sys
import threading
import webbrowser
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kubesched.simulator.documents import valid_strings
from kubesched.ui.workspace import InputError, Workspace

__all__ = ["create_app", "run"]

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 64 * 1024 * 1024
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
FULL_COLLECTION_THRESHOLD = 1000
"""The server's third GC threshold, as simulate's: it holds every manifest and the last simulation (millions of
objects at 50000 pods), which each full collection walks; one per thousand young collections, not ten."""
log = logging.getLogger("kubesched.ui")

Work = Callable[[Request, dict[str, Any]], Any]


class BadRequest(ValueError):
    """A request the page should not send: a missing parameter, a number that is not one, a body too large."""


def create_app(workspace: Workspace, allowed_hosts: list[str] | None = None) -> Starlette:
    """The app over `workspace`; `allowed_hosts` limits the Host header (None: any, for tests)."""
    ws = workspace

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
        Route("/api/node/clone", _post(clone), methods=["POST"]),
        Route(
            "/api/pods",
            _get(lambda r, _: ws.pods_page(_q(r, "status", "pending"), _q(r, "q"), _q(r, "node"), *_window(r))),
        ),
        Route("/api/pod", _get(lambda r, _: ws.pod_detail(_required(r, "key")))),
        Route(
            "/api/pod/record",
            _get(lambda r, _: ws.record_page(_required(r, "key"), _q(r, "show", "all"), _q(r, "q"), *_window(r))),
        ),
        Route("/api/events", _get(lambda r, _: ws.events_page(_q(r, "type"), _q(r, "q"), *_window(r)))),
        Route("/api/pending-over-time", _get(lambda r, _: {"points": ws.pending_over_time()})),
        Route("/api/objects", _get(lambda r, _: ws.objects_page(_q(r, "kind"), _q(r, "q"), *_window(r)))),
        Route("/api/objects", _post(apply), methods=["POST"]),
        Route("/api/object", _get(lambda r, _: ws.object_text(_int(r, "id")))),
        Route("/api/object", _endpoint(delete), methods=["DELETE"]),
        Route("/api/export", export),
        Route("/api/config", _get(lambda r, _: ws.config_text())),
        Route("/api/config", _post(set_config), methods=["PUT"]),
        Route("/api/rerun", _post(rerun), methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)] if allowed_hosts else []
    app = Starlette(routes=routes, middleware=middleware)
    app.router.redirect_slashes = False
    return app


async def _index(_: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers=_headers())


def _headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
    }


def _endpoint(work: Work, *, body: bool = False) -> Callable[[Request], Awaitable[Response]]:
    """Run `work` in a thread (simulations take seconds); answer its result or its error as JSON."""

    async def endpoint(request: Request) -> Response:
        try:
            payload = await _body(request) if body else {}
            result = await run_in_threadpool(work, request, payload)
            return JSONResponse(result, headers=_headers())
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


def _post(work: Work) -> Callable[[Request], Awaitable[Response]]:
    return _endpoint(work, body=True)


class _Unsupported(ValueError):
    """A change sent as anything but JSON."""


async def _body(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise _Unsupported("send changes as JSON (Content-Type: application/json)")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise BadRequest(f"request body over {MAX_BODY // (1024 * 1024)} MiB")
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
    host: str = "127.0.0.1",
    port: int = 8080,
    open_browser: bool = True,
    seed: int = 1,
    until: float | None = None,
    bind_latency: float = 0.0,
) -> int:
    """`kubesched ui`: simulate FILES, then serve the page until Ctrl-C. 2 for unusable input or address."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], FULL_COLLECTION_THRESHOLD)
    try:
        return _serve(files, config, host, port, open_browser, seed, until, bind_latency)
    finally:
        gc.set_threshold(*thresholds)


def _serve(
    files: list[str],
    config: str | None,
    host: str,
    port: int,
    open_browser: bool,
    seed: int,
    until: float | None,
    bind_latency: float,
) -> int:
    import uvicorn

    if not 0 <= port <= 65535:
        print(f"kubesched: ui: --port: {port} is not a port number", file=sys.stderr)
        return 2
    try:
        workspace = Workspace.from_files(files, config, seed=seed, until=until, bind_latency=bind_latency)
    except InputError as err:
        print(f"kubesched: {err}", file=sys.stderr)
        return 2
    try:
        sock = _listen(host, port)
    except OSError as err:
        print(f"kubesched: ui: cannot listen on {host}:{port}: {err.strerror or err}", file=sys.stderr)
        return 2
    loopback = host in LOOPBACK or host.startswith("127.")
    allowed = [*LOOPBACK, host] if loopback else None
    if not loopback:
        print(f"kubesched: ui: warning: serving on {host}: anyone who can reach it can read and edit", file=sys.stderr)
    bound = sock.getsockname()[1]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{bound}/"
    state = workspace.state()
    counts = state["counts"]
    print(
        f"kubesched: ui: {url} ({counts['nodes']} nodes, {counts.get('pending', 0)} pods pending; "
        f"simulated in {state['seconds']['wall']:.1f}s); Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(workspace, allowed),
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
    )
    if open_browser:
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    server.run(sockets=[sock])
    return 0


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
