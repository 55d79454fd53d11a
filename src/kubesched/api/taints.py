"""Taints, tolerations and host ports: the matching rules of core/v1 helpers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str

    def tolerates(self, taint: Taint) -> bool:
        """ToleratesTaint: empty effect matches all effects, empty key with Exists matches all keys."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


def parse_taints(raw: Iterable[Mapping[str, Any]] | None) -> tuple[Taint, ...]:
    return tuple(
        Taint(str(t.get("key", "")), str(t.get("value", "") or ""), str(t.get("effect", ""))) for t in raw or ()
    )


def parse_tolerations(raw: Iterable[Mapping[str, Any]] | None) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(
            str(t.get("key", "") or ""),
            str(t.get("operator", "") or ""),
            str(t.get("value", "") or ""),
            str(t.get("effect", "") or ""),
        )
        for t in raw or ()
    )


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def find_matching_untolerated_taint(
    taints: Iterable[Taint], tolerations: tuple[Toleration, ...], effects: frozenset[str]
) -> Taint | None:
    """First taint with one of `effects` that no toleration tolerates."""
    for taint in taints:
        if taint.effect in effects and not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


@dataclass(frozen=True, slots=True)
class HostPort:
    ip: str
    protocol: str
    port: int


def container_host_ports(spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    """Host ports a pod holds: containers and restartable (sidecar) init containers, hostPort > 0."""
    out: list[HostPort] = []
    sidecars = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    for group in (spec.get("containers") or (), sidecars):
        for c in group:
            for p in c.get("ports") or ():
                hp = int(p.get("hostPort") or 0)
                if hp <= 0:
                    continue
                out.append(
                    HostPort(str(p.get("hostIP") or DEFAULT_BIND_ALL_HOST_IP), str(p.get("protocol") or "TCP"), hp)
                )
    return tuple(out)


def host_ports_conflict(used: Iterable[HostPort], wanted: Iterable[HostPort]) -> bool:
    """HostPortInfo.CheckConflict: 0.0.0.0 conflicts with every IP on the same protocol and port."""
    used = list(used)
    if not used:
        return False
    for w in wanted:
        for u in used:
            if u.port != w.port or u.protocol != w.protocol:
                continue
            if u.ip == w.ip or u.ip == DEFAULT_BIND_ALL_HOST_IP or w.ip == DEFAULT_BIND_ALL_HOST_IP:
                return True
    return False
