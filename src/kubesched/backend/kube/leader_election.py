"""Leader election on a coordination.k8s.io/v1 Lease (client-go's leaderelection with the lease lock).

A candidate takes the Lease when it is free or its holder has not renewed it for
leaseDuration, judged on this process's own clock from when the record was last
seen to change (so clock skew between hosts does not matter). The leader renews
every retryPeriod; if it cannot renew within renewDeadline it has lost the lease
and must stop at once. Every write carries the resourceVersion it read, so two
candidates can never both win.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.backend.kube.api import APIError, KubeAPI, micro_time
from kubesched.backend.kube.resources import LEASE
from kubesched.klog import Message, V, info

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2


@dataclass
class LeaderElectionConfig:
    namespace: str = "kube-system"
    name: str = "kube-scheduler"
    identity: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


class LeaderElector:
    def __init__(self, api: KubeAPI, config: LeaderElectionConfig) -> None:
        self.api = api
        self.config = config
        self._observed: dict[str, Any] | None = None  # the Lease spec last read
        self._observed_at = 0.0
        self.leading = threading.Event()
        self.last_renew = 0.0
        self._lock_name = f"{config.namespace}/{config.name}"  # the lock as upstream's logs describe it

    @property
    def _path(self) -> str:
        return LEASE.path(self.config.namespace, self.config.name)

    def try_acquire_or_renew(self) -> bool:
        cfg = self.config
        now = micro_time()
        mine = {
            "holderIdentity": cfg.identity,
            "leaseDurationSeconds": max(1, round(cfg.lease_duration)),
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": 0,
        }
        try:
            lease = self.api.request("GET", self._path, retries=0, timeout=cfg.renew_deadline)
        except APIError as err:
            if err.status != 404:
                log.error(Message("Error retrieving lease lock", lock=self._lock_name, err=err))
                return False
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                "spec": mine,
            }
            try:
                created = self.api.request("POST", LEASE.path(cfg.namespace), body=body, retries=0)
            except APIError as err2:
                log.error(Message("Error initially creating lease lock", lock=self._lock_name, err=err2))
                return False
            self._observe(created)
            return True
        spec = lease.get("spec") or {}
        if self._observed != spec:
            self._observed, self._observed_at = spec, time.monotonic()
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or cfg.lease_duration)
        if holder and holder != cfg.identity and self._observed_at + duration > time.monotonic():
            return False
        if holder == cfg.identity:
            mine["acquireTime"] = spec.get("acquireTime") or now
            mine["leaseTransitions"] = int(spec.get("leaseTransitions") or 0)
        else:
            mine["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        lease["spec"] = mine
        try:
            updated = self.api.request("PUT", self._path, body=lease, retries=0, timeout=cfg.renew_deadline)
        except APIError as err:
            log.error(Message("Failed to update lease", lock=self._lock_name, err=err))
            return False
        self._observe(updated)
        return True

    def _observe(self, lease: dict[str, Any]) -> None:
        self._observed = lease.get("spec") or {}
        self._observed_at = time.monotonic()

    def acquire(self, stop: threading.Event) -> bool:
        """Block until this candidate leads (True) or `stop` is set (False)."""
        log.info(Message("Attempting to acquire leader lease...", lock=self._lock_name))
        while not stop.is_set():
            if self.try_acquire_or_renew():
                self.last_renew = time.monotonic()
                self.leading.set()
                log.info(Message("Successfully acquired lease", lock=self._lock_name))
                return True
            stop.wait(self.config.retry_period * (1 + random.random() * (JITTER_FACTOR - 1)))
        return False

    def renew_loop(self, stop: threading.Event, on_lost: Callable[[], None]) -> None:
        """Renew every retryPeriod; a renewal that does not succeed within renewDeadline loses the lease."""
        cfg = self.config
        while not stop.wait(cfg.retry_period):
            deadline = time.monotonic() + cfg.renew_deadline
            renewed = False
            while not stop.is_set() and time.monotonic() < deadline:
                if self.try_acquire_or_renew():
                    renewed = True
                    break
                stop.wait(min(cfg.retry_period, max(0.0, deadline - time.monotonic())))
            if stop.is_set():
                return
            if renewed:
                info(log, V(5), "Successfully renewed lease", lock=self._lock_name)
            else:
                self.leading.clear()
                log.info(Message("Failed to renew lease", lock=self._lock_name, err="context deadline exceeded"))
                on_lost()
                return
            self.last_renew = time.monotonic()

    def release(self) -> None:
        """Give the lease up on a clean shutdown so that another candidate need not wait it out."""
        if not self.leading.is_set() or self._observed is None:
            return
        self.leading.clear()
        try:
            lease = self.api.request("GET", self._path, retries=0, timeout=2.0)
            if (lease.get("spec") or {}).get("holderIdentity") != self.config.identity:
                return
            now = micro_time()
            lease["spec"] = {
                **lease.get("spec", {}),
                "holderIdentity": "",
                "leaseDurationSeconds": 1,
                "renewTime": now,
                "acquireTime": now,
            }
            self.api.request("PUT", self._path, body=lease, retries=0, timeout=2.0)
        except APIError as err:
            log.error(Message("Failed to release lease", lock=self._lock_name, err=err))

    def healthy(self, timeout: float = 20.0) -> bool:
        """The /healthz check upstream adds: a leader whose last renewal is older than leaseDuration + timeout."""
        if not self.leading.is_set():
            return True
        return time.monotonic() - self.last_renew <= self.config.lease_duration + timeout
