"""Delegated authentication and authorization of the secure port, as kube-scheduler's.

kube-scheduler does not decide who may read /metrics or /configz: it asks the API
server. A bearer token goes to a TokenReview, a client certificate is checked
against --client-ca-file (or the client-ca-file of configmap
kube-system/extension-apiserver-authentication), and the user found is then put to
a SubjectAccessReview for the path and verb. Requests with no credentials are
anonymous (system:anonymous); the always-allow paths (/healthz, /readyz, /livez)
and the group system:masters pass without a review. Without a client to ask (no
--authentication-kubeconfig / --authorization-kubeconfig and not in a cluster),
tokens are not looked at and every other path is forbidden, as upstream.

Answers are cached (10 s by default) so that a scrape every few seconds costs the
API server nothing; caches are bounded, so random tokens cannot grow them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from kubesched.backend.kube.api import APIError, KubeAPI, load_configuration

log = logging.getLogger(__name__)

ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"
AUTHENTICATED = "system:authenticated"
PRIVILEGED_GROUPS = ("system:masters",)  # DelegatingAuthorizationOptions' AlwaysAllowGroups
CONFIGMAP_NAMESPACE = "kube-system"
CONFIGMAP_NAME = "extension-apiserver-authentication"
REVIEW_TIMEOUT = 10.0  # upstream's TokenRequestTimeout and ClientTimeout
CACHE_ENTRIES = 4096
DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")


class DelegationError(Exception):
    """Delegated authentication cannot be set up (unreadable kubeconfig or CA file); upstream's words."""


@dataclass
class DelegationOptions:
    """kube-scheduler's --authentication-* / --authorization-* / --client-ca-file flags."""

    authentication_kubeconfig: str = ""
    authorization_kubeconfig: str = ""
    always_allow_paths: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW_PATHS
    skip_lookup: bool = False
    tolerate_lookup_failure: bool = True
    client_ca_file: str = ""
    token_cache_ttl: float = 10.0
    allowed_cache_ttl: float = 10.0
    denied_cache_ttl: float = 10.0


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


ANONYMOUS_USER = User(ANONYMOUS, (UNAUTHENTICATED,))


class Unauthorized(Exception):
    """Credentials were given and are not good: the request gets 401, whatever its path."""


@dataclass
class Decision:
    allowed: bool
    reason: str = ""
    error: str = ""  # the review could not be made: 500, as upstream's WithAuthorization


class TTLCache:
    """A small thread-safe map whose entries expire; full, it drops the expired ones, then everything."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, size: int = CACHE_ENTRIES) -> None:
        self._clock = clock
        self._size = size
        self._lock = threading.Lock()
        self._items: dict[Any, tuple[float, Any]] = {}

    def get(self, key: Any) -> Any:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            if hit[0] <= self._clock():
                del self._items[key]
                return None
            return hit[1]

    def put(self, key: Any, value: Any, ttl: float) -> None:
        if ttl <= 0:
            return
        with self._lock:
            now = self._clock()
            if len(self._items) >= self._size:
                self._items = {k: v for k, v in self._items.items() if v[0] > now}
                if len(self._items) >= self._size:
                    self._items.clear()
            self._items[key] = (now + ttl, value)

    def __len__(self) -> int:
        return len(self._items)


def _user_from_status(user: dict[str, Any]) -> User:
    extra = tuple(sorted((str(k), tuple(str(x) for x in (v or ()))) for k, v in (user.get("extra") or {}).items()))
    return User(
        name=str(user.get("username") or ""),
        groups=tuple(str(g) for g in user.get("groups") or ()),
        uid=str(user.get("uid") or ""),
        extra=extra,
    )


def _with_authenticated(user: User) -> User:
    """Every authenticated user is in system:authenticated (upstream's AuthenticatedGroupAdder)."""
    if AUTHENTICATED in user.groups:
        return user
    return User(user.name, (*user.groups, AUTHENTICATED), user.uid, user.extra)


def user_from_certificate(cert: dict[str, Any]) -> User | None:
    """A verified client certificate's user: its CN, its groups the O entries (upstream's CommonNameUserConversion)."""
    name, groups = "", []
    for rdn in cert.get("subject") or ():
        for key, value in rdn:
            if key == "commonName":
                name = value
            elif key == "organizationName":
                groups.append(value)
    return User(name, tuple(groups)) if name else None


class Authenticator:
    """Bearer token by TokenReview (cached), verified client certificate, else anonymous."""

    def __init__(self, api: KubeAPI | None, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.api = api
        self.ttl = ttl
        self.cache = TTLCache(clock)

    def authenticate(self, authorization: str | None, peer_cert: dict[str, Any] | None) -> User:
        """The request's user; raises Unauthorized for a token that is not good or cannot be reviewed."""
        user = user_from_certificate(peer_cert) if peer_cert else None  # no common name: no opinion
        if user is not None:
            return _with_authenticated(user)
        token = _bearer(authorization) if self.api is not None else None
        if token is None:
            return ANONYMOUS_USER
        key = hashlib.sha256(token.encode()).digest()
        cached = self.cache.get(key)
        if cached is None:
            cached = self._review(token)
            self.cache.put(key, cached, self.ttl)
        if isinstance(cached, str):
            raise Unauthorized(cached)
        return _with_authenticated(cached)

    def _review(self, token: str) -> User | str:
        """TokenReview's answer: the user, or why not (a failure to ask raises Unauthorized uncached)."""
        assert self.api is not None
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        try:
            out = self.api.request(
                "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body=body, timeout=REVIEW_TIMEOUT
            )
        except (APIError, OSError, ValueError) as err:
            log.error("Failed to make webhook authenticator request: %s", err)
            raise Unauthorized(str(err)) from err
        status = out.get("status") or {}
        if not status.get("authenticated"):
            return str(status.get("error") or "invalid bearer token")
        return _user_from_status(status.get("user") or {})


def _bearer(header: str | None) -> str | None:
    """The token of `Authorization: Bearer <token>`; None for another scheme or an empty token, which leave the
    request anonymous, as upstream's bearertoken authenticator has no opinion on them."""
    if header is None:
        return None
    parts = header.strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


class PathMatcher:
    """--authorization-always-allow-paths: exact paths, or prefixes ending in '*' (upstream's path authorizer)."""

    def __init__(self, paths: tuple[str, ...]) -> None:
        self.exact: set[str] = set()
        self.prefixes: list[str] = []
        for p in paths:
            bare = p.lstrip("/")
            if "*" in bare[:-1]:
                raise DelegationError(f'only trailing * allowed in "{bare}"')
            if bare.endswith("*"):
                self.prefixes.append(bare[:-1])
            else:
                self.exact.add(bare)

    def __call__(self, path: str) -> bool:
        bare = path.lstrip("/")
        return bare in self.exact or any(bare.startswith(p) for p in self.prefixes)


class Authorizer:
    """Privileged groups, then always-allow paths, then a SubjectAccessReview (cached) if there is a client."""

    def __init__(
        self,
        api: KubeAPI | None,
        always_allow_paths: tuple[str, ...],
        allowed_ttl: float,
        denied_ttl: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api = api
        self.paths = PathMatcher(always_allow_paths)
        self.allowed_ttl = allowed_ttl
        self.denied_ttl = denied_ttl
        self.cache = TTLCache(clock)

    def open_path(self, path: str) -> bool:
        return self.paths(path)

    def authorize(self, user: User, verb: str, path: str) -> Decision:
        if any(g in PRIVILEGED_GROUPS for g in user.groups) or self.paths(path):
            return Decision(True)
        if self.api is None:
            return Decision(False)
        key = (user, verb, path)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        decision = self._review(user, verb, path)
        if not decision.error:
            self.cache.put(key, decision, self.allowed_ttl if decision.allowed else self.denied_ttl)
        return decision

    def _review(self, user: User, verb: str, path: str) -> Decision:
        assert self.api is not None
        spec: dict[str, Any] = {"user": user.name, "groups": list(user.groups), "nonResourceAttributes": {}}
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        spec["nonResourceAttributes"] = {"path": path, "verb": verb}
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        try:
            out = self.api.request(
                "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=body, timeout=REVIEW_TIMEOUT
            )
        except (APIError, OSError, ValueError) as err:
            log.error("Failed to make webhook authorizer request: %s", err)
            return Decision(False, error=str(err))
        status = out.get("status") or {}
        return Decision(bool(status.get("allowed")) and not status.get("denied"), str(status.get("reason") or ""))


@dataclass
class Delegation:
    """What the secure port needs to decide: the authenticator, the authorizer and the client CA (PEM)."""

    authenticator: Authenticator
    authorizer: Authorizer
    client_ca: str = ""
    lookup_client: KubeAPI | None = None
    options: DelegationOptions = field(default_factory=DelegationOptions)

    @classmethod
    def load(cls, opts: DelegationOptions) -> Delegation:
        """Clients and the client CA file, before anything is served; raises DelegationError (bad input)."""
        authn = _client(opts.authentication_kubeconfig, "authentication")
        authz = _client(opts.authorization_kubeconfig, "authorization")
        client_ca = ""
        if opts.client_ca_file:
            client_ca = _read_ca(opts.client_ca_file)
        if authz is None:
            log.warning(
                "No authorization-kubeconfig provided, so SubjectAccessReview of authorization tokens won't work."
            )
        return cls(
            authenticator=Authenticator(authn, opts.token_cache_ttl),
            authorizer=Authorizer(authz, opts.always_allow_paths, opts.allowed_cache_ttl, opts.denied_cache_ttl),
            client_ca=client_ca,
            lookup_client=authn,
            options=opts,
        )

    def lookup(self) -> None:
        """Read configmap kube-system/extension-apiserver-authentication for the client CA, as upstream at start.

        A missing configmap is no error (the API server has no client CA); another failure is tolerated with
        upstream's warnings unless --authentication-tolerate-lookup-failure=false, when it raises
        DelegationError."""
        opts = self.options
        if opts.skip_lookup:
            return
        where = f"configmap/{CONFIGMAP_NAME} in {CONFIGMAP_NAMESPACE}"
        if self.lookup_client is None:
            if not opts.client_ca_file:
                log.warning(
                    "No authentication-kubeconfig provided in order to lookup client-ca-file in %s, "
                    "so client certificate authentication won't work.",
                    where,
                )
            log.warning(
                "No authentication-kubeconfig provided in order to lookup requestheader-client-ca-file in %s, "
                "so request-header client certificate authentication won't work.",
                where,
            )
            return
        try:
            cm = self.lookup_client.request(
                "GET", f"/api/v1/namespaces/{CONFIGMAP_NAMESPACE}/configmaps/{CONFIGMAP_NAME}", timeout=REVIEW_TIMEOUT
            )
        except APIError as err:
            if err.status == 404:
                return
            self._lookup_failed(err.message or str(err))
            return
        except (OSError, ValueError) as err:
            self._lookup_failed(str(err))
            return
        data = cm.get("data") or {}
        if not opts.client_ca_file and data.get("client-ca-file"):
            self.client_ca = str(data["client-ca-file"])
        if data.get("requestheader-client-ca-file"):
            log.info("front-proxy (request-header) authentication is not supported; %s names a CA for it", where)

    def _lookup_failed(self, reason: str) -> None:
        if not self.options.tolerate_lookup_failure:
            raise DelegationError(f"unable to load configmap based request-header-client-ca-file: {reason}")
        log.warning("Error looking up in-cluster authentication configuration: %s", reason)
        log.warning("Continuing without authentication configuration. This may treat all requests as anonymous.")
        log.warning(
            "To require authentication configuration lookup to succeed, "
            "set --authentication-tolerate-lookup-failure=false"
        )


def _client(kubeconfig: str, what: str) -> KubeAPI | None:
    """The client for reviews: the kubeconfig named, else in-cluster credentials, else none (as upstream's
    RemoteKubeConfigFileOptional). QPS 200, burst 400, as upstream's delegated clients."""
    if kubeconfig:
        try:
            _check_kubeconfig(kubeconfig)
            return KubeAPI(load_configuration(kubeconfig), qps=200, burst=400, user_agent="kubesched-delegation")
        except Exception as err:  # missing or malformed kubeconfig: the kubernetes client raises many kinds
            message = f"failed to get delegated {what} kubeconfig: {err}"
            raise DelegationError(message) from err
    if not (os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT")):
        return None  # not in a cluster: silently none, as upstream on rest.ErrNotInCluster
    try:
        return KubeAPI(load_configuration(), qps=200, burst=400, user_agent="kubesched-delegation")
    except Exception as err:  # a broken service account mount: warned, then go without
        log.warning("failed to read in-cluster kubeconfig for delegated %s: %s", what, err)
        return None


def _check_kubeconfig(path: str) -> None:
    """Refuse a file that is no kubeconfig in words that say so (the client library's are about its insides)."""
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except OSError as err:
        raise DelegationError(f"{path}: {(err.strerror or str(err)).lower()}") from err
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise DelegationError(f"{path}: not YAML ({str(err).splitlines()[0]})") from err
    if not isinstance(doc, dict):
        raise DelegationError(f"{path}: not a kubeconfig (no YAML mapping)")


def _read_ca(path: str) -> str:
    """The client CA bundle's text; an unreadable file or one without a certificate raises, in upstream's words."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as err:
        reason = f"open {path}: {err.strerror.lower()}" if isinstance(err, OSError) and err.strerror else str(err)
        raise DelegationError(f"unable to load client CA provider: {reason}") from err
    try:
        ssl.create_default_context(cadata=text)
    except (ssl.SSLError, ValueError) as err:
        raise DelegationError(
            f'unable to load client CA provider: error loading CA bundle for "client-ca-bundle::{path}": '
            f"data does not contain any valid RSA or ECDSA certificates ({err})"
        ) from err
    return text


def status_body(code: int, reason: str, message: str, details: bool, pretty: bool = False) -> bytes:
    """A metav1.Status as upstream's error responses write it: compact with a newline, or indented for curl,
    Wget and browsers (apiserver's isPrettyPrint); <, >, & escaped as Go's encoder does."""
    doc: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details:
        doc["details"] = {}
    doc["code"] = code
    if pretty:
        text = json.dumps(doc, indent=2, ensure_ascii=False)
    else:
        text = json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n"
    for char, escaped in GO_ESCAPES:
        text = text.replace(char, escaped)
    return text.encode()


GO_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def pretty_print(query: str, user_agent: str) -> bool:
    """Whether upstream would indent its error body: ?pretty=<true>, else a curl, Wget or browser user agent."""
    if "pretty" in query:
        values = parse_qs(query, keep_blank_values=True).get("pretty")
        if values and values[0]:
            return values[0].lower() in ("1", "t", "true")
    return user_agent.startswith(("curl", "Wget", "Mozilla/5.0"))
