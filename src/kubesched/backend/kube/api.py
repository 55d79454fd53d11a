"""HTTP access to the API server: credentials, client-side QPS/burst, retries, raw JSON.

The official `kubernetes` client loads kubeconfig or in-cluster credentials
(tokens, client certificates, exec plugins) and owns the connection pool; its
models are not used: every response is decoded with `wire.loads`, which is over
ten times faster on pods than model deserialisation, and request bodies go to its
connection pool encoded by `wire.dumps`, past the client's generic serialisation.
"""

from __future__ import annotations

import logging
import os
import re
import ssl
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from typing import Any, NamedTuple

import urllib3
from kubernetes import config as kube_config
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.exceptions import ApiException

from kubesched.api.object import Obj
from kubesched.backend.kube import wire
from kubesched.backend.kube.lock import SchedulerLock
from kubesched.backend.kube.transport import Request, Response, Transport
from kubesched.klog import V

log = logging.getLogger(__name__)

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
# Statuses worth another try: the server was busy or failed, not the request.
RETRYABLE = {429, 500, 502, 503, 504}
# Methods that may be sent again when a connection broke after the request went out (as client-go,
# which never repeats a create or an update whose outcome it did not hear).
_IDEMPOTENT = {"GET", "HEAD", "PATCH", "DELETE"}
# Failures before any byte of the request reached the server: always safe to try again.
_NOT_SENT = (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ConnectTimeoutError, ConnectionRefusedError)


def micro_time() -> str:
    """Now as a MicroTime (eventTime, Lease times)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339() -> str:
    """Now as a Time (condition transition times)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Call(NamedTuple):
    """One request of a pipelined exchange (`KubeAPI.pipeline`)."""

    method: str
    path: str
    body: Any = None
    content_type: str = JSON


class APIError(Exception):
    """A non-2xx answer (status 0: no answer at all; `unknown`: the request went out, so it may have applied)."""

    def __init__(self, status: int, reason: str, message: str, *, unknown: bool = False) -> None:
        super().__init__(f"{message} ({status} {reason})" if status else message)
        self.status, self.reason, self.message = status, reason, message
        self.unknown = unknown

    @property
    def conflict(self) -> bool:
        """409 or 404: the object changed or is gone; trying again cannot help."""
        return self.status in (404, 409)

    @property
    def gone(self) -> bool:
        return self.status == 410


class TLSError(APIError):
    """The TLS handshake failed (an untrusted or expired certificate, a name it does not cover): no request
    went out, and trying again at once cannot help."""

    def __init__(self, detail: str, *, verify: bool) -> None:
        super().__init__(0, "TLS", detail)
        self.verify = verify  # the certificate was refused, not the handshake itself


def _tls_error(err: ApiException) -> TLSError:
    """The kubernetes client turns urllib3's SSLError into an ApiException whose text is a two-line repr;
    the ssl module's own error, kept as its context, says what failed in a few words."""
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return TLSError(str(cause.verify_message or cause.reason or cause).rstrip("."), verify=True)
        if isinstance(cause, ssl.SSLError):
            return TLSError(str(cause.reason or cause), verify=False)
        cause = cause.__cause__ or cause.__context__
    return TLSError(" ".join(str(err.reason or err).split()), verify=False)


# The authorizer's words: `pods is forbidden: User "u" cannot list resource "pods" in API group "" at ...`.
_FORBIDDEN = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) resource "(?P<resource>[^"]*)"'
    r'(?: in API group "(?P<group>[^"]*)")?'
)
_OBJECT_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-f]+>: ")


def forbidden_rule(err: APIError) -> tuple[str, str, str] | None:
    """(user, verb, resource) of a 403 the API server's authorizer gave, the resource as kubectl names it
    (`resourceslices.resource.k8s.io`); None when the message says otherwise."""
    m = _FORBIDDEN.search(err.message) if err.status == 403 else None
    if m is None:
        return None
    group = m.group("group") or ""
    return m.group("user"), m.group("verb"), m.group("resource") + (f".{group}" if group else "")


def failure_kind(err: BaseException) -> str:
    """What went wrong, in a word, for grouping the same failure of many requests: tls, unauthorized,
    forbidden, unreachable (no answer), http-N, or the exception's type."""
    if isinstance(err, TLSError):
        return "tls"
    if isinstance(err, APIError):
        return {0: "unreachable", 401: "unauthorized", 403: "forbidden"}.get(err.status, f"http-{err.status}")
    return type(err).__name__


def _grouped(refused: list[str]) -> str:
    """["list pods", "watch nodes", "list nodes"] as "list nodes, pods; watch nodes"."""
    by_verb: dict[str, set[str]] = {}
    for entry in refused:
        verb, _, resource = entry.partition(" ")
        by_verb.setdefault(verb, set()).add(resource)
    return "; ".join(f"{verb} {', '.join(sorted(names))}" for verb, names in sorted(by_verb.items()))


def describe(err: BaseException, server: str, refused: list[str] | None = None) -> str:
    """One line for a user: which server, what failed and what to check. `refused`: the verb and
    resource of every request refused with a 403 (for 403s of several requests at once)."""
    kind = failure_kind(err)
    text = " ".join((err.message if isinstance(err, APIError) else str(err)).split())  # a server's words: one line
    if isinstance(err, TLSError):
        if not err.verify:
            return f"{server}: TLS handshake failed ({text}): is this the API server's HTTPS address?"
        if "expired" in text or "not yet valid" in text:
            return (
                f"{server}: the server's certificate is out of date ({text}): "
                "renew the API server's certificate, or check this machine's clock"
            )
        if "mismatch" in text:
            return (
                f"{server}: the server's certificate does not cover this address ({text}): "
                "check the server address in the kubeconfig"
            )
        return (
            f"{server}: the server's certificate is not trusted ({text}): check certificate-authority in the kubeconfig"
        )
    if not isinstance(err, APIError):
        return f"{server}: {type(err).__name__}: {text}"
    if kind == "unauthorized":
        return (
            f"{server}: 401 Unauthorized, the server did not accept the credentials: "
            "check the token (or client certificate) of the kubeconfig's user; it may have expired"
        )
    if kind == "forbidden":
        rule = forbidden_rule(err)
        refused = refused or ([f"{rule[1]} {rule[2]}"] if rule else [])
        who = f'user "{rule[0]}"' if rule else "the kubeconfig's user"
        what = f"{who} may not {_grouped(refused)}" if refused else text
        return f"{server}: 403 Forbidden, {what}: check the RBAC role bound to {who}"
    if kind == "unreachable":
        return f"{server}: no answer: {_OBJECT_REPR.sub('', text)}"
    status = " ".join(f"{err.status} {err.reason}".split())
    return f"{server}: {text or 'no message'} ({status})"


class RateLimiter:
    """Token bucket: `qps` tokens a second, at most `burst` saved up (client-go's flowcontrol)."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def wait(self, n: int = 1) -> None:
        """Take `n` tokens (one per request), sleeping until the bucket can spare them."""
        if self.qps <= 0:
            return
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= n
            delay = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if delay > 0:
            time.sleep(delay)


class CredentialsError(Exception):
    """No kubeconfig to read and no in-cluster service account; the message says what was tried."""


class ClientConfigError(ValueError):
    """Client settings no client can be made from (a --master that is no address, a burst of 0); the message
    is client-go's."""


def server_url(host: str) -> str:
    """--master as client-go's DefaultServerURL takes it: a URL, or a host:port pair to which https:// is
    added. Raises ClientConfigError for anything else."""
    url = host if "://" in host else f"https://{host}"
    parts = urllib.parse.urlsplit(url)
    try:
        _ = parts.port  # a port out of range or not a number raises
        valid = bool(parts.hostname) and not any(c.isspace() for c in parts.netloc) and parts.path in ("", "/")
    except ValueError:
        valid = False
    if not valid:
        raise ClientConfigError(f"host must be a URL or a host:port pair: {host!r}")
    return url.rstrip("/")


def kubectl_kubeconfig(environ: Mapping[str, str] | None = None) -> str:
    """The kubeconfig kubectl reads when none is named: the first existing file listed in $KUBECONFIG
    (kubectl merges them all; the first is enough here), else ~/.kube/config if it exists; '' for none.
    A set $KUBECONFIG takes the place of ~/.kube/config, as for kubectl."""
    env = os.environ if environ is None else environ
    listed = env.get("KUBECONFIG", "")
    if listed:
        for entry in listed.split(os.pathsep):
            path = os.path.expanduser(entry) if entry else ""
            if path and os.path.isfile(path):
                return path
        return ""
    home = os.path.expanduser(os.path.join("~", ".kube", "config"))
    return home if os.path.isfile(home) else ""


def load_configuration(kubeconfig: str = "", master: str = "", *, kubectl_defaults: bool = False) -> Configuration:
    """`kubeconfig`, else (with kubectl_defaults, as kubectl) $KUBECONFIG or ~/.kube/config, else in-cluster
    credentials; `master` overrides the server address. kube-scheduler reads neither $KUBECONFIG nor
    ~/.kube/config: `kubesched run` leaves kubectl_defaults off."""
    cfg = Configuration()
    path = kubeconfig or (kubectl_kubeconfig() if kubectl_defaults else "")
    if path:
        if not os.path.exists(path):
            raise CredentialsError(f"kubeconfig {path}: no such file")
        if os.path.isdir(path):
            raise CredentialsError(f"kubeconfig {path}: is a directory")
        kube_config.load_kube_config(config_file=path, client_configuration=cfg)
    elif not master:
        try:
            kube_config.load_incluster_config(client_configuration=cfg)
        except kube_config.ConfigException as err:
            raise CredentialsError(_no_credentials(kubectl_defaults, str(err))) from err
    if master:
        cfg.host = server_url(master)
        _keep_host(cfg)
    return cfg


def _keep_host(cfg: Configuration) -> None:
    """The kubeconfig loader's token hook copies the kubeconfig's server back into the configuration before
    every request (and installs itself again): without this, --master would hold for the first request only."""
    hook = cfg.refresh_api_key_hook
    if hook is None:
        return
    host = cfg.host

    def refresh(configuration: Configuration) -> None:
        hook(configuration)
        configuration.host = host
        configuration.refresh_api_key_hook = refresh

    cfg.refresh_api_key_hook = refresh


def _no_credentials(kubectl_defaults: bool, reason: str) -> str:
    if not kubectl_defaults:
        return f"no --kubeconfig given and no in-cluster credentials ({reason.rstrip('.')})"
    listed = os.environ.get("KUBECONFIG", "")
    tried = f"no file in $KUBECONFIG ({listed}) exists" if listed else "$KUBECONFIG is not set, no ~/.kube/config"
    return f"no --kubeconfig given, {tried}, and no in-cluster credentials ({reason.rstrip('.')})"


_insecure_warned = threading.Event()


def _warn_insecure_once(configuration: Configuration) -> None:
    """An insecure kubeconfig earns one warning, not urllib3's two lines on every request."""
    if configuration.verify_ssl:
        return
    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    if not _insecure_warned.is_set():
        _insecure_warned.set()
        log.warning("TLS certificate of %s is not verified (insecure-skip-tls-verify)", configuration.host)


def _share_tls_context(pool_kw: dict[str, Any], configuration: Configuration) -> None:
    """One TLS context for every connection of a client, as client-go's one transport.

    Left alone, urllib3 builds a context for each new connection and, when no CA is
    given (insecure-skip-tls-verify, or a server the system roots vouch for), loads the
    system's root store into it: tens of milliseconds of CPU each, paid by the informers'
    fifteen concurrent lists and watches and the first binding's connection at start.
    The roots are loaded once here instead, and not at all when nothing is verified.
    A client certificate keeps urllib3's own per-connection contexts: it loads the
    certificate files into the context it is given on each connection, which a shared
    context must not see from several threads at once.
    """
    if configuration.cert_file or configuration.key_file:
        return
    context = urllib3.util.ssl_.create_urllib3_context(
        cert_reqs=ssl.CERT_REQUIRED if configuration.verify_ssl else ssl.CERT_NONE
    )
    if configuration.verify_ssl and not (configuration.ssl_ca_cert or configuration.ca_cert_data):
        context.load_default_certs()
    pool_kw["ssl_context"] = context


class KubeAPI:
    def __init__(
        self,
        configuration: Configuration,
        *,
        qps: float = 50.0,
        burst: int = 100,
        lock: SchedulerLock | None = None,
        retries: int = 3,
        retry_backoff: float = 0.2,
        user_agent: str = "kubesched",
    ) -> None:
        if qps > 0 and burst <= 0:  # client-go's rest.RESTClientFor refuses it, and so kube-scheduler's start
            raise ClientConfigError(
                "burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0"
            )
        # Binding threads each hold a connection while they wait: the pool must not turn them away.
        configuration.connection_pool_maxsize = max(getattr(configuration, "connection_pool_maxsize", 0) or 0, 80)
        _warn_insecure_once(configuration)
        # No retries inside urllib3: it would repeat a POST whose answer was lost, and log each try as a
        # warning; `request` retries itself, knowing which failures are safe to repeat.
        configuration.retries = False
        # The proxy from the environment, as the connection pool was made with: otherwise every request's
        # credential refresh (the kubeconfig loader sets the server address again) reads the environment anew.
        configuration.proxy = configuration.proxy
        self._client = ApiClient(configuration)
        self.host = str(configuration.host)
        pool_manager = self._client.rest_client.pool_manager
        _share_tls_context(pool_manager.connection_pool_kw, configuration)
        # Short requests on lean keep-alive connections (transport.py); watches stay on urllib3's pool.
        self._transport = Transport.for_client(pool_manager, self.host, configuration.connection_pool_maxsize)
        self._client.user_agent = user_agent
        self.limiter = RateLimiter(qps, burst)
        self.lock = lock
        self.retries = retries
        self.retry_backoff = retry_backoff
        self._stats_lock = threading.Lock()
        self.request_count = 0  # requests and seconds spent in them, for the benchmark's breakdown
        self.request_seconds = 0.0

    def _headers(self, content_type: str) -> dict[str, str]:
        """Accept, content type, user agent and credentials (the configuration's hook refreshes a token that
        expires, so this is asked again for every request)."""
        headers = {"Accept": JSON, "Content-Type": content_type, **self._client.default_headers}
        for auth in self._client.configuration.auth_settings().values():
            headers[auth["key"]] = auth["value"]
        return headers

    def _send(
        self, method: str, path: str, query: list[tuple[str, str]], body: Any, content_type: str, timeout: Any
    ) -> Any:
        """One request on the client's connection pool, with its address, user agent and credentials (the
        configuration's hook refreshes a token that expires); the body is encoded here, once."""
        cfg = self._client.configuration
        headers = self._headers(content_type)
        target = path
        if query:
            target += "?" + "&".join(f"{k}={urllib.parse.quote(v)}" for k, v in query)
        payload = None if body is None else wire.dumps(body)
        transport, host = self._transport, cfg.host
        if isinstance(timeout, tuple):
            limits = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        else:
            limits = urllib3.Timeout(total=timeout)
        self.limiter.wait()
        try:
            if transport is not None and not isinstance(timeout, tuple) and host == transport.base_url:
                return transport.request(method, target, payload, headers, timeout)
            return self._client.rest_client.pool_manager.request(
                method, host + target, body=payload, headers=headers, timeout=limits, preload_content=False
            )
        except urllib3.exceptions.SSLError as err:
            raise _tls_failure(err) from None

    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = JSON,
        timeout: float = 30.0,
        retries: int | None = None,
    ) -> Obj:
        """One call; 5xx and 429 are retried with backoff, other failures raise APIError."""
        attempts = (self.retries if retries is None else retries) + 1
        q = list((query or {}).items())
        attempt = 0
        while True:
            start = time.perf_counter()
            sent = True
            try:
                with self.unlocked():
                    resp = self._send(method, path, q, body, content_type, timeout)
                    data = resp.read()
                status = resp.status
            except (urllib3.exceptions.HTTPError, OSError) as failure:
                status, data, sent = 0, str(failure).encode(), not isinstance(failure, _NOT_SENT)
            except TLSError:
                self._count(start)
                raise
            self._count(start)
            if 200 <= status < 300:
                return wire.loads(data) if data else {}
            attempt += 1
            err = _error(status, data, unknown=status == 0 and sent)
            again = status in RETRYABLE or (status == 0 and (not sent or method in _IDEMPOTENT))
            if not again or attempt == attempts:
                raise err
            log.log(V(4), "%s %s failed, retrying: %s", method, path, err)
            with self.unlocked():
                time.sleep(self.retry_backoff * 2 ** (attempt - 1))

    def pipeline(self, calls: Sequence[Call], timeout: float = 30.0) -> list[Obj | APIError | ValueError]:
        """The calls as one pipelined exchange on one connection (transport.py), each tried once, never retried.

        Each slot holds the decoded answer, or an APIError as `request` raises it (status 0 and
        `unknown` for a call the connection broke or closed before answering: it may have been
        applied), or ValueError for a call that would not make a well-formed request (not sent).
        Without the lean transport (a proxy) the calls go one after the other through `request`.
        """
        if not calls:
            return []
        transport = self._transport
        if transport is None or transport.base_url != self._client.configuration.host:
            return [self._one(call) for call in calls]
        requests = [
            Request(
                method,
                path,
                None if body is None else wire.dumps(body),
                self._headers(content_type),
            )
            for method, path, body, content_type in calls
        ]
        self.limiter.wait(len(requests))
        start = time.perf_counter()
        with self.unlocked():
            answers = transport.pipeline(requests, timeout)
        self._count(start, len(answers))
        return [_outcome(answer) for answer in answers]

    def _one(self, call: Call) -> Obj | APIError | ValueError:
        try:
            return self.request(call.method, call.path, body=call.body, content_type=call.content_type, retries=0)
        except (APIError, ValueError) as err:
            return err

    def _count(self, start: float, n: int = 1) -> None:
        with self._stats_lock:
            self.request_count += n
            self.request_seconds += time.perf_counter() - start

    def unlocked(self) -> AbstractContextManager[None]:
        """Outside the scheduler lock while waiting on the network, when this thread holds it."""
        return self.lock.released() if self.lock is not None else nullcontext()

    def watch(self, path: str, query: dict[str, str], timeout: float) -> Iterator[Obj]:
        """Watch events as dicts until the server ends the stream; errors raise APIError or urllib3's."""
        q = list({**query, "watch": "true"}.items())
        raw = self._send("GET", path, q, None, JSON, (10.0, timeout))
        if raw.status != 200:
            raise _error(raw.status, raw.read())
        try:
            buf = b""
            for chunk in raw.stream(65536, decode_content=True):
                *lines, buf = (buf + chunk).split(b"\n")
                for line in lines:
                    if line.strip():
                        yield wire.loads(line)
            if buf.strip():
                yield wire.loads(buf)
        finally:
            raw.release_conn()


def _tls_failure(err: urllib3.exceptions.SSLError) -> TLSError:
    """A failed handshake in the words the kubernetes client would have given, the ssl module's error below."""
    wrapped = ApiException(status=0, reason=f"{type(err).__name__}\n{err}")
    wrapped.__cause__ = err
    return _tls_error(wrapped)


def _outcome(answer: Response | Exception) -> Obj | APIError | ValueError:
    """One answer of a pipelined exchange as `request` would have returned or raised it (tried once)."""
    if isinstance(answer, ValueError):
        return answer
    if isinstance(answer, urllib3.exceptions.SSLError):
        return _tls_failure(answer)
    if isinstance(answer, Exception):
        return _error(0, str(answer).encode(), unknown=not isinstance(answer, _NOT_SENT))
    if 200 <= answer.status < 300:
        return wire.loads(answer.data) if answer.data else {}
    return _error(answer.status, answer.data)


def _error(status: int, data: bytes, *, unknown: bool = False) -> APIError:
    try:
        doc = wire.loads(data)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return APIError(status, str(doc.get("reason") or ""), str(doc.get("message") or ""))
    return APIError(status, "", data.decode("utf-8", "replace")[:300] or "no response", unknown=unknown)
