"""`kubesched shadow --metrics-address`: the shadow's counters on kube-scheduler's secure port.

The same server as `kubesched run`'s (serving.py): HTTPS, a self-signed certificate
unless one is given, and requests authenticated by TokenReview and authorized by
SubjectAccessReview through the delegated kubeconfigs (in a pod, its service
account), with /healthz, /readyz and /livez allowed to all. Those reviews are the
only requests the shadow may send that are not reads, and only when --metrics-address
is given: they are answered, never stored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram

from kubesched.delegation import DEFAULT_ALWAYS_ALLOW_PATHS, Delegation, DelegationOptions
from kubesched.serving import Endpoints
from kubesched.shadow.tally import Decision

LAG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class AddressError(ValueError):
    """A --metrics-address that is no HOST:PORT."""


def parse_address(text: str) -> tuple[str, int]:
    """HOST:PORT or [IPv6]:PORT; port 0 picks a free one."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise AddressError(f"--metrics-address {text}: expected HOST:PORT (e.g. 127.0.0.1:10260)")
    return host, int(port)


class ShadowMetrics:
    """Counters of observed and agreeing decisions, by the cluster's outcome; the outcomes; preemptions; the lag."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.observed = Counter(
            "kubesched_shadow_decisions_observed",
            "Decisions of the cluster's scheduler the shadow observed, by the cluster's outcome.",
            ["reason"],
            registry=r,
        )
        self.agreeing = Counter(
            "kubesched_shadow_decisions_agreeing",
            "Observed decisions the shadow took alike: the same node, or both unschedulable.",
            ["reason"],
            registry=r,
        )
        self.outcomes = Counter(
            "kubesched_shadow_decisions",
            "Observed decisions by outcome: agree, tie, sampled or differ.",
            ["outcome"],
            registry=r,
        )
        self.preemptions = Counter(
            "kubesched_shadow_preemptions",
            "Observed decisions where the cluster or the shadow preempts, by whether both nominated the same node "
            "and victims.",
            ["agree"],
            registry=r,
        )
        self.lag = Histogram(
            "kubesched_shadow_lag_seconds",
            "From the watch event of a decision to the shadow's answer.",
            buckets=LAG_BUCKETS,
            registry=r,
        )

    def __call__(self, d: Decision) -> None:
        self.observed.labels(d.reason).inc()
        if d.outcome == "agree":
            self.agreeing.labels(d.reason).inc()
        self.outcomes.labels(d.outcome).inc()
        if d.preempts:
            self.preemptions.labels(str(d.preemption_agrees).lower()).inc()
        self.lag.observe(d.lag)


@dataclass
class ServingOptions:
    address: str
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    delegation: DelegationOptions | None = None


def serve(metrics: ShadowMetrics, opts: ServingOptions, ready: Callable[[], bool]) -> tuple[Endpoints, str, int]:
    """Start the secure port; the endpoints and the address served. Raises AddressError, DelegationError or
    ServingError: bad input, all of them."""
    host, port = parse_address(opts.address)
    delegation = Delegation.load(opts.delegation or DelegationOptions(always_allow_paths=DEFAULT_ALWAYS_ALLOW_PATHS))
    endpoints = Endpoints(
        registry=metrics.registry,
        configz={},
        healthz={"ping": lambda: True},
        readyz={"informer-sync": ready},
        delegation=delegation,
    )
    delegation.lookup()
    served_host, served_port = endpoints.serve(
        host, port, cert_file=opts.tls_cert_file, key_file=opts.tls_private_key_file
    )
    return endpoints, served_host, served_port
