"""`kubesched run`: the scheduler against a real cluster (cmd/kube-scheduler/app/server.go).

Order of start: start the informers, serve the secure port, wait for the informers'
first lists, win the leader lease (if enabled), then schedule. Upstream serves
before its informers start; here the informers start first, before the scheduler's
own modules are even imported, so that the API server answers the lists while
Python loads the framework and plugins (a restart binds its first pod that much
sooner). Nothing reads the lists before the scheduler is built: they wait in the
store's inbox.

Scheduling cycles run on this thread; binding cycles run on a pool of threads,
sharing the scheduler lock with it and letting go of it while they wait on the API
server. A lost lease stops scheduling at once and ends the process with status 1; a
SIGTERM drains the binding cycles in flight and releases the lease first.
"""

from __future__ import annotations

import logging
import queue
import signal
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.api.duration import parse_duration
from kubesched.backend.kube.api import KubeAPI, load_configuration
from kubesched.backend.kube.cluster import ClusterStore, KubeClient
from kubesched.backend.kube.dispatcher import APIDispatcher
from kubesched.backend.kube.leader_election import LeaderElectionConfig, LeaderElector
from kubesched.backend.kube.lock import SchedulerLock
from kubesched.backend.kube.reflector import Backoff
from kubesched.backend.kube.resources import watched_resources
from kubesched.clock import WallClock
from kubesched.config.goduration import format_go_duration
from kubesched.config.load import SchedulerConfig
from kubesched.klog import Message
from kubesched.startup import few_full_collections, without_gc

# Imported once the informers are listing (SchedulerApp.__init__), not before.
if TYPE_CHECKING:
    from kubernetes.client import Configuration

    from kubesched.delegation import DelegationOptions
    from kubesched.metrics import SchedulerMetrics
    from kubesched.scheduler import Scheduler
    from kubesched.serving import Endpoints

log = logging.getLogger(__name__)

BINDING_WORKERS = 64
MAX_IDLE_WAIT = 0.5


class BindingThreads:
    """The threads binding cycles run on (upstream starts a goroutine per binding): a fixed set reading one
    plain queue. ThreadPoolExecutor cost about 16 us of CPU a cycle (a Future, a work item, an idle
    semaphore and their conditions); a queue item costs about 3."""

    def __init__(self, size: int, run: Callable[[Callable[[], None]], None], name: str = "binding") -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._run = run
        self._cancelled = False
        self._threads = [threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True) for i in range(size)]
        for t in self._threads:
            t.start()

    def submit(self, job: Callable[[], None]) -> None:
        self._jobs.put(job)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            if not self._cancelled:
                self._run(job)

    def shutdown(self, *, wait: bool) -> None:
        """Stop the threads after the jobs queued so far; `wait=False` drops those not started and returns."""
        self._cancelled = self._cancelled or not wait
        for _ in self._threads:
            self._jobs.put(None)
        if wait:
            for t in self._threads:
                t.join()


@dataclass
class RunOptions:
    kubeconfig: str = ""
    master: str = ""
    qps: float | None = None  # None: the configuration's clientConnection value
    burst: int | None = None
    leader_elect: bool | None = None  # None: the configuration's leaderElection value
    lease_duration: float | None = None
    renew_deadline: float | None = None
    retry_period: float | None = None
    lease_name: str | None = None
    lease_namespace: str | None = None
    bind_address: str = "0.0.0.0"
    secure_port: int = 10259  # 0 picks a free port; -1 serves nothing
    cert_dir: str = ""
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    delegation: DelegationOptions | None = None  # None: kube-scheduler's defaults
    record_annotations: bool = False
    sync_timeout: float | None = None
    informer_backoff: Callable[[], Backoff] = Backoff
    on_serving: Callable[[str, int], None] | None = None
    verbosity: int = 0  # -v: from 2 on, /configz shows the profiles as the frameworks completed them
    identity: str = field(default_factory=lambda: f"{socket.gethostname()}_{uuid.uuid4()}")


def _first(*values: Any) -> Any:
    return next(v for v in values if v is not None)


def _go_duration(seconds: float) -> str:
    return format_go_duration(round(seconds * 1e9))


def configz(config: SchedulerConfig, opts: RunOptions) -> dict[str, Any]:
    """/configz's componentconfig: the v1 configuration with the flags kube-scheduler applies to it.

    The leader election flags always override it; without a --config file the client
    flags fill in clientConnection (upstream's deprecated flags apply only then). Below
    -v=2 the profiles are as defaulted, from -v=2 as the frameworks captured them.
    """
    from kubesched.config.render import go_number, render_config

    out = render_config(config, completed=opts.verbosity >= 2)
    le = out["leaderElection"]
    for key, value in (
        ("leaderElect", opts.leader_elect),
        ("leaseDuration", None if opts.lease_duration is None else _go_duration(opts.lease_duration)),
        ("renewDeadline", None if opts.renew_deadline is None else _go_duration(opts.renew_deadline)),
        ("retryPeriod", None if opts.retry_period is None else _go_duration(opts.retry_period)),
        ("resourceName", opts.lease_name),
        ("resourceNamespace", opts.lease_namespace),
    ):
        if value is not None:
            le[key] = value
    if not config.source:
        cc = out["clientConnection"]
        cc["kubeconfig"] = opts.kubeconfig or cc["kubeconfig"]
        cc["qps"] = go_number(_first(opts.qps, cc["qps"]))
        cc["burst"] = _first(opts.burst, cc["burst"])
    return out


class SchedulerApp:
    def __init__(self, config: SchedulerConfig, opts: RunOptions) -> None:
        raw = config.raw
        cc = raw.clientConnection
        kubeconfig = opts.kubeconfig or cc.kubeconfig or ""
        self.opts = opts
        self.stop = threading.Event()
        self.lost = threading.Event()
        self.lock = SchedulerLock()
        cfg = load_configuration(kubeconfig, opts.master)
        qps, burst = float(_first(opts.qps, cc.qps)), int(_first(opts.burst, cc.burst))
        self.api = KubeAPI(cfg, qps=qps, burst=burst, lock=self.lock)
        informer_api = KubeAPI(cfg, qps=qps, burst=burst)  # its own pool: watches hold connections for minutes
        informer_api.limiter = self.api.limiter  # one client-side budget, as one client-go client
        watched = watched_resources(config.release.workload_aware)
        self.store = ClusterStore(informer_api, self.stop, resources=watched, backoff=opts.informer_backoff)
        self.store.start()
        try:
            self._build(config, opts, cfg)
        except BaseException:
            self.stop.set()  # the informers end with the app that failed to build
            raise

    def _build(self, config: SchedulerConfig, opts: RunOptions, cfg: Configuration) -> None:
        """Everything but the informers: the scheduler, its client and dispatcher, metrics, leader election and
        the endpoints, with the modules they need (most of `kubesched run`'s start-up imports)."""
        from kubesched.backend.kube.annotations import AnnotationRecorder
        from kubesched.delegation import Delegation, DelegationOptions
        from kubesched.event_handlers import informed_scheduler
        from kubesched.metrics import SchedulerMetrics
        from kubesched.serving import Endpoints

        le = config.raw.leaderElection
        self.metrics: SchedulerMetrics = SchedulerMetrics()
        self.dispatcher = APIDispatcher(observe=self.metrics.observe_api_call)
        self.client = KubeClient(self.api, self.dispatcher, instance=socket.gethostname(), stop=self.stop)
        self.client.wake = self.store.wake.set
        self.clock = WallClock()
        self.pool = BindingThreads(BINDING_WORKERS, self._binding_cycle)
        observer = AnnotationRecorder(self.api, self.dispatcher) if opts.record_annotations else None
        self.scheduler: Scheduler = informed_scheduler(
            config,
            self.store,
            client=self.client,
            clock=self.clock,
            record=opts.record_annotations,
            observer=observer,
            bind_executor=self._submit_binding,
            metrics=self.metrics,
        )
        self.metrics.watch(self.scheduler.queue, self.scheduler.cache, self.dispatcher.pending)
        for warning in self.scheduler.unknown_plugin_configs:
            log.warning("%s%s", f"{config.source}: " if config.source else "", warning)
        self.elector: LeaderElector | None = None
        if _first(opts.leader_elect, le.leaderElect):
            self.elector = LeaderElector(
                KubeAPI(cfg, qps=0, burst=1),  # lease renewals never queue behind bindings
                LeaderElectionConfig(
                    namespace=_first(opts.lease_namespace, le.resourceNamespace),
                    name=_first(opts.lease_name, le.resourceName),
                    identity=opts.identity,
                    lease_duration=_first(opts.lease_duration, parse_duration(le.leaseDuration)),
                    renew_deadline=_first(opts.renew_deadline, parse_duration(le.renewDeadline)),
                    retry_period=_first(opts.retry_period, parse_duration(le.retryPeriod)),
                ),
            )
        # Kubeconfigs and the client CA file are read now (bad ones are bad input); the API server is asked for
        # its client CA when serving starts.
        delegation = Delegation.load(opts.delegation or DelegationOptions()) if opts.secure_port >= 0 else None
        self.endpoints: Endpoints = Endpoints(
            registry=self.metrics.registry,
            configz={"componentconfig": configz(config, opts)},
            healthz={"ping": lambda: True, "leaderElection": self._leader_healthy},
            readyz={"informer-sync": self.store.synced, "shutdown": lambda: not self.stop.is_set()},
            delegation=delegation,
        )

    def _leader_healthy(self) -> bool:
        return self.elector is None or self.elector.healthy()

    def _submit_binding(self, fn: Callable[[], None]) -> None:
        """Called under the lock from the scheduling loop: the binding cycle goes to a binding thread."""
        self.pool.submit(fn)

    def _binding_cycle(self, fn: Callable[[], None]) -> None:
        with self.lock:
            try:
                fn()
            except Exception:  # one pod's binding bug must not stop the others
                log.exception("binding cycle failed")
        self.store.wake.set()

    def _on_lost(self) -> None:
        """Leadership lost: refuse further bindings at once and stop (upstream exits the process)."""
        self.client.fenced = True
        self.lost.set()
        self.stop.set()
        self.store.wake.set()

    def run(self) -> int:
        if self.opts.record_annotations:
            from kubesched.backend.kube.annotations import missing_right

            why = missing_right(self.api)
            if why:
                log.error(Message("command failed", err=why))
                return self._shutdown(1)
        if self.opts.secure_port >= 0:
            from kubesched.delegation import DelegationError
            from kubesched.serving import ServingError

            try:
                self.endpoints.delegation.lookup()
                host, port = self.endpoints.serve(
                    self.opts.bind_address,
                    self.opts.secure_port,
                    cert_file=self.opts.tls_cert_file,
                    key_file=self.opts.tls_private_key_file,
                    cert_dir=self.opts.cert_dir,
                )
            except (ServingError, DelegationError) as err:
                log.error(Message("command failed", err=str(err)))  # as kube-scheduler exits on it, with status 1
                return self._shutdown(1)
            log.info("Serving securely on %s:%d", host, port)
            if self.opts.on_serving is not None:
                self.opts.on_serving(host, port)
        if not self.store.wait_for_cache_sync(self.stop, self.opts.sync_timeout):
            log.error("informers did not sync before stopping")
            return self._shutdown(1)
        # The first lists become the store, cache and queue, which live as long as the process: made with the
        # collector off and frozen, as the start-up's objects are (kubesched.startup).
        with self.lock, without_gc():
            self.store.drain()
        if self.elector is not None:
            if not self.elector.acquire(self.stop):
                return self._shutdown(0)
            threading.Thread(
                target=self.elector.renew_loop, args=(self.stop, self._on_lost), name="leader-renew", daemon=True
            ).start()
        with few_full_collections():
            self._loop()
        if self.lost.is_set():
            log.error("leaderelection lost")
        return self._shutdown(1 if self.lost.is_set() else 0)

    def _loop(self) -> None:
        sched, store, clock = self.scheduler, self.store, self.clock
        while not self.stop.is_set():
            with self.lock:
                store.drain()
                clock.run_due()
                qpi = sched.queue.pop()
                if qpi is not None:
                    sched.schedule_one(qpi)
                    continue
                wait = MAX_IDLE_WAIT
                for when in (clock.next_timer(), sched.queue.next_wakeup()):
                    if when is not None:
                        wait = min(wait, max(0.0, when - clock.now))
            store.wake.wait(wait)
            store.wake.clear()

    def _shutdown(self, code: int) -> int:
        self.stop.set()
        if not self.lost.is_set():
            self.pool.shutdown(wait=True)
            self.dispatcher.close(timeout=5.0)
            if self.elector is not None:
                self.elector.release()
        else:
            self.pool.shutdown(wait=False)
        self.endpoints.stop()
        return code

    def install_signal_handlers(self) -> None:
        def stop(signum: int, frame: Any) -> None:
            log.info("received signal %d, shutting down", signum)
            self.stop.set()
            self.store.wake.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
