"""A stand-in Kubernetes API server on loopback, for tests and benchmarks of `kubesched run`.

It keeps objects with a global resourceVersion, serves paginated lists from a
snapshot, watches from a resourceVersion (with bookmarks, field selectors and
410 Gone once history is compacted), the pods/binding and status subresources,
strategic-merge status patches, deletes with uid preconditions and optimistic
concurrency on updates (Leases). Tests can drop watch streams, compact history
and make requests fail, to see the scheduler's informers and writers recover, and
take rights away (`deny`), to see what the scheduler does without them.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kubesched.api.object import Obj
from kubesched.backend.kube.api import rfc3339
from kubesched.backend.kube.resources import BY_KIND, Resource
from kubesched.backend.pod_status import merge_conditions

_BY_PATH = {(r.group_version, r.plural): r for r in BY_KIND.values()}


USER = "fake"  # who every client is, in 403 messages and SelfSubjectReviews
_WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SSR_PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
DROP_RESPONSE = -1  # a fault "status": the request is carried out, then the connection closes unanswered


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    token: str = ""  # only requests carrying this bearer token
    message: str = ""  # the Status's message; "" for "injected failure <status>"


@dataclass(slots=True)
class _Change:
    rv: int
    plural: str
    type: str
    old: Obj | None
    new: Obj | None


class _Dropped(Exception):
    pass


def _field(obj: Obj, path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur)


def _selector_matches(selector: str, obj: Obj | None) -> bool:
    if obj is None:
        return False
    for term in filter(None, selector.split(",")):
        if "!=" in term:
            path, value = term.split("!=", 1)
            if _field(obj, path) == value:
                return False
        else:
            path, value = term.split("=", 1)
            if _field(obj, path.rstrip("=")) != value:
                return False
    return True


def strategic_merge(target: Obj, patch: Obj) -> Obj:
    """Enough of a strategic merge patch for status: maps merge, null deletes, conditions merge by type."""
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif key == "conditions" and isinstance(value, list):
            out[key] = merge_conditions(out.get(key) or [], value)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = strategic_merge(out[key], value)
        else:
            out[key] = value
    return out


_REASONS = {401: "Unauthorized", 403: "Forbidden"}


def _status(code: int, reason: str, message: str) -> Obj:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


class APIError(Exception):
    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason = code, reason


class FakeAPIServer:
    """Start with `start()`; `url` is then http://127.0.0.1:PORT. State methods are thread-safe."""

    def __init__(self, *, bookmark_interval: float = 1.0) -> None:
        self.bookmark_interval = bookmark_interval
        self.version: str | None = None  # GET /version's gitVersion; None: not served (404)
        self._cond = threading.Condition()
        self._rv = 0
        self.objects: dict[str, dict[tuple[str, str], Obj]] = {r.plural: {} for r in BY_KIND.values()}
        self._history: list[_Change] = []
        self._compacted = 0
        self._drops = 0
        self._faults: list[Fault] = []
        self._denied: set[tuple[str, str]] = set()  # (verb, resource[/subresource]) RBAC does not grant
        self._holds: list[tuple[str, re.Pattern[str], threading.Event]] = []
        self._snapshots: dict[str, list[Obj]] = {}
        self.requests: list[tuple[str, str]] = []
        self.bindings: list[tuple[str, str, str]] = []  # (namespace/name, node, client token), in order
        self._stopping = False
        self._httpd: ThreadingHTTPServer | None = None

    # Life

    def start(self) -> FakeAPIServer:
        server = self

        class Handler(_Handler):
            api = server

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # a scheduler opens many connections at once

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name="fake-apiserver", daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def kubeconfig(self, token: str = "fake-token") -> str:
        """A kubeconfig (YAML text) pointing at this server; the token tells clients apart in `bindings`."""
        return (
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
            f"clusters:\n- name: fake\n  cluster:\n    server: {self.url}\n"
            "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n"
            f"users:\n- name: fake\n  user:\n    token: {token}\n"
        )

    # Faults

    def fail(
        self, method: str, pattern: str, status: int = 500, times: int = 1, token: str = "", message: str = ""
    ) -> None:
        """The next `times` requests whose method and path (and bearer token, if given) match answer `status`
        (with `message`, as the real server words a 403, say).

        With `DROP_RESPONSE` the request is applied and the client hears nothing: the connection just closes.
        """
        with self._cond:
            self._faults.append(Fault(method.upper(), re.compile(pattern), status, times, token, message))

    def hold(self, method: str, pattern: str) -> threading.Event:
        """Requests whose method and path match wait, unanswered, until the returned event is set.

        A call that is slow to answer: a deletion still under way, say.
        """
        gate = threading.Event()
        with self._cond:
            self._holds.append((method.upper(), re.compile(pattern), gate))
        return gate

    def _wait_if_held(self, method: str, path: str) -> None:
        with self._cond:
            gates = [gate for m, pattern, gate in self._holds if m == method and pattern.search(path)]
        for gate in gates:
            gate.wait()

    def deny(self, verb: str, resource: str) -> None:
        """Take a right away, as RBAC would: `deny("patch", "pods")` makes every pod patch answer 403
        Forbidden and SelfSubjectAccessReviews for it answer not allowed."""
        with self._cond:
            self._denied.add((verb, resource))

    def _allowed(self, verb: str, resource: str) -> bool:
        with self._cond:
            return (verb, resource) not in self._denied

    def clear_faults(self) -> None:
        with self._cond:
            self._faults.clear()

    def drop_watches(self) -> None:
        """Cut every open watch stream mid-stream, without the closing chunk."""
        with self._cond:
            self._drops += 1
            self._cond.notify_all()

    def compact(self) -> None:
        """Forget history up to now: watches from older resourceVersions get 410 Gone."""
        with self._cond:
            self._compacted = self._rv

    # State

    def _resource(self, kind: str) -> Resource:
        return BY_KIND[kind]

    def _record(self, plural: str, type_: str, old: Obj | None, new: Obj | None) -> None:
        self._history.append(_Change(self._rv, plural, type_, old, new))
        self._cond.notify_all()

    def _bump(self, obj: Obj) -> None:
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)

    def create(self, obj: Obj, namespace: str = "") -> Obj:
        res = self._resource(obj["kind"])
        with self._cond:
            obj = copy.deepcopy(obj)
            meta = obj.setdefault("metadata", {})
            if res.namespaced:
                meta["namespace"] = namespace or meta.get("namespace") or "default"
            key = (meta.get("namespace", ""), meta.get("name", ""))
            if not key[1]:
                raise APIError(422, "Invalid", "metadata.name: Required value")
            if key in self.objects[res.plural]:
                raise APIError(409, "AlreadyExists", f'{res.plural} "{key[1]}" already exists')
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", rfc3339())
            obj.setdefault("apiVersion", res.group_version)
            self._bump(obj)
            self.objects[res.plural][key] = obj
            self._record(res.plural, "ADDED", None, obj)
            return copy.deepcopy(obj)

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        res = self._resource(kind)
        with self._cond:
            obj = self.objects[res.plural].get((namespace if res.namespaced else "", name))
            return copy.deepcopy(obj) if obj is not None else None

    def list(self, kind: str) -> list[Obj]:
        with self._cond:
            return copy.deepcopy(list(self.objects[self._resource(kind).plural].values()))

    def _lookup(self, res: Resource, namespace: str, name: str) -> Obj:
        obj = self.objects[res.plural].get((namespace if res.namespaced else "", name))
        if obj is None:
            raise APIError(404, "NotFound", f'{res.plural} "{name}" not found')
        return obj

    def _replace(self, res: Resource, old: Obj, new: Obj) -> Obj:
        meta = new["metadata"]
        self._bump(new)
        self.objects[res.plural][(meta.get("namespace", "") if res.namespaced else "", meta["name"])] = new
        self._record(res.plural, "MODIFIED", old, new)
        return copy.deepcopy(new)

    def update(self, obj: Obj, namespace: str = "") -> Obj:
        """PUT: a resourceVersion in the object must match the stored one."""
        res = self._resource(obj["kind"])
        with self._cond:
            meta = obj.get("metadata") or {}
            old = self._lookup(res, namespace or meta.get("namespace", ""), meta.get("name", ""))
            _check_version(res, old, meta.get("resourceVersion"))
            new = copy.deepcopy(obj)
            new["metadata"] = {**old["metadata"], **new["metadata"]}
            return self._replace(res, old, new)

    def patch(self, kind: str, namespace: str, name: str, patch: Obj) -> Obj:
        """PATCH: a metadata.resourceVersion in the patch is a precondition, as the real server has it."""
        res = self._resource(kind)
        with self._cond:
            old = self._lookup(res, namespace, name)
            _check_version(res, old, (patch.get("metadata") or {}).get("resourceVersion"))
            return self._replace(res, old, strategic_merge(copy.deepcopy(old), patch))

    def delete(self, kind: str, namespace: str, name: str, uid: str = "") -> Obj:
        res = self._resource(kind)
        with self._cond:
            old = self._lookup(res, namespace, name)
            if uid and old["metadata"].get("uid") != uid:
                raise APIError(409, "Conflict", f"Precondition failed: UID in precondition: {uid}")
            del self.objects[res.plural][(namespace if res.namespaced else "", name)]
            self._rv += 1
            gone = copy.deepcopy(old)
            gone["metadata"]["resourceVersion"] = str(self._rv)
            self._record(res.plural, "DELETED", old, gone)
            return gone

    def bind(self, namespace: str, name: str, binding: Obj, token: str = "") -> None:
        with self._cond:
            res = self._resource("Pod")
            old = self._lookup(res, namespace, name)
            uid = (binding.get("metadata") or {}).get("uid")
            if uid and old["metadata"].get("uid") != uid:
                raise APIError(409, "Conflict", f"Precondition failed: UID in precondition: {uid}")
            current = (old.get("spec") or {}).get("nodeName")
            if current:
                raise APIError(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on pods/binding "{name}": '
                    f'pod {name} is already assigned to node "{current}"',
                )
            node = (binding.get("target") or {}).get("name", "")
            new = copy.deepcopy(old)
            new.setdefault("spec", {})["nodeName"] = node
            cond = {"type": "PodScheduled", "status": "True", "lastTransitionTime": rfc3339()}
            new["status"] = strategic_merge(new.get("status") or {}, {"conditions": [cond]})
            self._replace(res, old, new)
            self.bindings.append((f"{namespace}/{name}", node, token))

    def set_pod_phase(self, namespace: str, name: str, phase: str) -> None:
        self.patch("Pod", namespace, name, {"status": {"phase": phase}})

    # Serving

    def _take_fault(self, method: str, path: str, token: str) -> tuple[int, str]:
        with self._cond:
            self.requests.append((method, path))
            for f in self._faults:
                if f.times > 0 and f.method == method and f.pattern.search(path) and f.token in ("", token):
                    f.times -= 1
                    return f.status, f.message
        return 0, ""

    def _list(self, res: Resource, namespace: str, query: dict[str, str]) -> Obj:
        limit = int(query.get("limit") or 0)
        token = query.get("continue", "")
        with self._cond:
            if token:
                ref = json.loads(base64.b64decode(token))
                sid, rv, start = ref["id"], ref["rv"], ref["start"]
                items = self._snapshots.get(sid, [])
            else:
                selector = query.get("fieldSelector", "")
                items = [
                    copy.deepcopy(o)
                    for (ns, _), o in sorted(self.objects[res.plural].items())
                    if (not namespace or ns == namespace) and _selector_matches(selector, o)
                ]
                sid, rv, start = uuid.uuid4().hex, self._rv, 0
        meta: Obj = {"resourceVersion": str(rv)}
        page = items[start : start + limit] if limit else items[start:]
        with self._cond:
            if limit and start + limit < len(items):
                self._snapshots[sid] = items  # later pages come from this list, as from etcd at rv
                nxt = {"id": sid, "rv": rv, "start": start + limit}
                meta["continue"] = base64.b64encode(json.dumps(nxt).encode()).decode()
            else:
                self._snapshots.pop(sid, None)
        return {"kind": f"{res.kind}List", "apiVersion": res.group_version, "metadata": meta, "items": page}

    def _watch_events(self, res: Resource, namespace: str, query: dict[str, str], handler: _Handler) -> None:
        selector = query.get("fieldSelector", "")
        bookmarks = query.get("allowWatchBookmarks") == "true"
        deadline = time.monotonic() + float(query.get("timeoutSeconds") or 1800)
        rv_text = query.get("resourceVersion", "")
        with self._cond:
            drops = self._drops
            if rv_text not in ("", "0") and int(rv_text) < self._compacted:
                status = _status(410, "Expired", f"too old resource version: {rv_text} ({self._compacted})")
                handler.send_chunk({"type": "ERROR", "object": status})
                return
            if rv_text in ("", "0"):
                initial = [
                    {"type": "ADDED", "object": copy.deepcopy(o)}
                    for (ns, _), o in sorted(self.objects[res.plural].items())
                    if (not namespace or ns == namespace) and _selector_matches(selector, o)
                ]
                since = self._rv
            else:
                initial, since = [], int(rv_text)
            pos = next((i for i, c in enumerate(self._history) if c.rv > since), len(self._history))
        for ev in initial:
            handler.send_chunk(ev)
        last_bookmark = time.monotonic()
        while True:
            with self._cond:
                while (
                    pos >= len(self._history)
                    and self._drops == drops
                    and not self._stopping
                    and time.monotonic() < deadline
                    and not (bookmarks and time.monotonic() - last_bookmark >= self.bookmark_interval)
                ):
                    self._cond.wait(timeout=0.05)
                if self._drops != drops or self._stopping:
                    raise _Dropped
                changes = self._history[pos:]
                pos = len(self._history)
                current_rv = self._rv
            out: list[Obj] = []
            for c in changes:
                if c.plural != res.plural:
                    continue
                obj = c.new if c.new is not None else c.old
                assert obj is not None
                if namespace and obj["metadata"].get("namespace") != namespace:
                    continue
                was = c.old is not None and c.type != "ADDED" and _selector_matches(selector, c.old)
                now_in = c.type != "DELETED" and _selector_matches(selector, c.new)
                if was and now_in:
                    out.append({"type": "MODIFIED", "object": c.new})
                elif now_in:
                    out.append({"type": "ADDED", "object": c.new})
                elif was:
                    out.append({"type": "DELETED", "object": obj})
            for ev in out:
                handler.send_chunk(ev)
            if time.monotonic() >= deadline:
                return
            if bookmarks and time.monotonic() - last_bookmark >= self.bookmark_interval:
                last_bookmark = time.monotonic()
                marker: Obj = {
                    "kind": res.kind,
                    "apiVersion": res.group_version,
                    "metadata": {"resourceVersion": str(current_rv)},
                }
                handler.send_chunk({"type": "BOOKMARK", "object": marker})


def _check_version(res: Resource, stored: Obj, rv: str | None) -> None:
    """Optimistic concurrency: a resourceVersion the writer names must be the stored one."""
    if rv and rv != stored["metadata"]["resourceVersion"]:
        raise APIError(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {res.plural} "{stored["metadata"]["name"]}": '
            "the object has been modified; please apply your changes to the latest version and try again",
        )


class _Handler(BaseHTTPRequestHandler):
    api: FakeAPIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    _drop_reply = False

    def _reply(self, code: int, body: Obj) -> None:
        if self._drop_reply:
            self.close_connection = True
            return
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_chunk(self, event: Obj) -> None:
        data = json.dumps(event).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _body(self) -> Obj:
        return json.loads(self._raw) if self._raw else {}

    def _route(self, path: str) -> tuple[Resource, str, str, str]:
        parts = [p for p in path.split("/") if p]
        if parts[:2] == ["api", "v1"]:
            gv, rest = "v1", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            gv, rest = f"{parts[1]}/{parts[2]}", parts[3:]
        else:
            raise APIError(404, "NotFound", f"the server could not find the requested resource ({path})")
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if not rest or (gv, rest[0]) not in _BY_PATH:
            raise APIError(404, "NotFound", f"the server could not find the requested resource ({path})")
        res = _BY_PATH[(gv, rest[0])]
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        return res, namespace, name, sub

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._raw = self.rfile.read(length) if length else b""  # read even when failing: the connection is reused
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        self.api._wait_if_held(method, url.path)
        status, message = self.api._take_fault(method, url.path, token)
        self._drop_reply = status == DROP_RESPONSE
        if status > 0:
            reason = _REASONS.get(status, "InternalError")
            self._reply(status, _status(status, reason, message or f"injected failure {status}"))
            return
        try:
            if method == "POST" and url.path in (SSAR_PATH, SSR_PATH):
                self._reply(201, self._review(url.path))
                return
            if method == "GET" and url.path == "/version" and self.api.version is not None:
                self._reply(200, {"major": "1", "gitVersion": self.api.version})
                return
            res, namespace, name, sub = self._route(url.path)
            api = self.api
            self._authorize(method, res, namespace, name, sub, query)
            if method == "GET" and not name and query.get("watch") in ("true", "1"):
                self._watch(res, namespace, query)
                return
            if method == "GET" and not name:
                self._reply(200, api._list(res, namespace, query))
            elif method == "GET":
                obj = api.get(res.kind, namespace, name)
                if obj is None:
                    raise APIError(404, "NotFound", f'{res.plural} "{name}" not found')
                self._reply(200, obj)
            elif method == "POST" and sub == "binding":
                api.bind(namespace, name, self._body(), token)
                self._reply(201, {"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201})
            elif method == "POST":
                body = self._body()
                body["kind"] = res.kind
                self._reply(201, api.create(body, namespace))
            elif method == "PUT":
                body = self._body()
                body["kind"] = res.kind
                body.setdefault("metadata", {})["name"] = name
                self._reply(200, api.update(body, namespace))
            elif method == "PATCH":
                self._reply(200, api.patch(res.kind, namespace, name, self._body()))
            elif method == "DELETE":
                uid = ((self._body().get("preconditions") or {}).get("uid")) or ""
                self._reply(200, api.delete(res.kind, namespace, name, uid))
            else:
                raise APIError(405, "MethodNotAllowed", method)
        except APIError as err:
            self._reply(err.code, _status(err.code, err.reason, str(err)))

    def _review(self, path: str) -> Obj:
        """A SelfSubjectAccessReview or SelfSubjectReview, answered from the rights `deny` left."""
        body = self._body()
        if path == SSR_PATH:
            return {**body, "status": {"userInfo": {"username": USER}}}
        attrs = (body.get("spec") or {}).get("resourceAttributes") or {}
        resource = attrs.get("resource", "") + (f"/{attrs['subresource']}" if attrs.get("subresource") else "")
        return {**body, "status": {"allowed": self.api._allowed(attrs.get("verb", ""), resource)}}

    def _authorize(
        self, method: str, res: Resource, namespace: str, name: str, sub: str, query: dict[str, str]
    ) -> None:
        if method == "GET":
            verb = "get" if name else ("watch" if query.get("watch") in ("true", "1") else "list")
        else:
            verb = _WRITE_VERBS.get(method, "")
        resource = f"{res.plural}/{sub}" if sub else res.plural
        if self.api._allowed(verb, resource):
            return
        group = "" if res.group_version == "v1" else res.group_version.split("/")[0]
        where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
        raise APIError(
            403,
            "Forbidden",
            f'{res.plural} "{name}" is forbidden: User "{USER}" cannot {verb} resource "{resource}" '
            f'in API group "{group}"{where}',
        )

    def _watch(self, res: Resource, namespace: str, query: dict[str, str]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self.api._watch_events(res, namespace, query, self)
        except _Dropped:
            self.close_connection = True
            return
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")
