"""Taints, tolerations and host ports: the matching rules of core/v1 helpers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api import field, names

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


# Validation as core/v1 validation does it, on decoded manifests; each returns the field errors.

TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


def _validate_effect(effect: str, path: str, *, allow_empty: bool) -> list[str]:
    if not effect:
        return [] if allow_empty else [field.required(path)]
    return [] if effect in TAINT_EFFECTS else [field.not_supported(path, effect, TAINT_EFFECTS)]


def validate_taints(raw: Sequence[Mapping[str, Any]], path: str) -> list[str]:
    """validateNodeTaints: key, value, a required effect, unique by key and effect."""
    errs: list[str] = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(raw):
        p = f"{path}[{i}]"
        key, value, effect = str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", ""))
        errs.extend(field.invalid(f"{p}.key", key, msg) for msg in names.is_qualified_name(key))
        problems = names.is_valid_label_value(value)
        if problems:
            errs.append(field.invalid(f"{p}.value", value, ";".join(problems)))
        errs.extend(_validate_effect(effect, f"{p}.effect", allow_empty=False))
        if (key, effect) in seen:
            shown = {"Key": key, "Value": value, "Effect": effect, "TimeAdded": t.get("timeAdded")}
            errs.append(field.duplicate(p, shown) + ": taints must be unique by key and effect pair")
            continue
        seen.add((key, effect))
    return errs


def validate_tolerations(raw: Sequence[Mapping[str, Any]], path: str) -> list[str]:
    """ValidateTolerations (v1.36, without the alpha Lt/Gt operators)."""
    errs: list[str] = []
    for i, t in enumerate(raw):
        p = f"{path}[{i}]"
        key, op, value = str(t.get("key", "")), str(t.get("operator", "")), str(t.get("value", ""))
        effect = str(t.get("effect", ""))
        if key:
            errs.extend(field.invalid(f"{p}.key", key, msg) for msg in names.is_qualified_name(key))
        if not key and op != "Exists":
            errs.append(
                field.invalid(
                    f"{p}.operator",
                    op,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if t.get("tolerationSeconds") is not None and effect != NO_EXECUTE:
            errs.append(
                field.invalid(f"{p}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
            )
        if op in ("Equal", ""):
            problems = names.is_valid_label_value(value)
            if problems:
                errs.append(field.invalid(f"{p}.operator", value, ";".join(problems)))
        elif op == "Exists":
            if value:
                errs.append(field.invalid(f"{p}.operator", value, "value must be empty when `operator` is 'Exists'"))
        elif op in ("Lt", "Gt"):
            errs.append(field.not_supported(f"{p}.operator", op, ("Equal", "Exists", "Lt", "Gt")))
        else:
            errs.append(field.not_supported(f"{p}.operator", op, ("Equal", "Exists")))
        errs.extend(_validate_effect(effect, f"{p}.effect", allow_empty=True))
    return errs
