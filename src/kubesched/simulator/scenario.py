"""Scenario documents: timed create/update/delete steps played on the virtual clock.

    apiVersion: kubesched.io/v1alpha1
    kind: Scenario
    steps:
    - at: 30s
      create: [<manifest>, ...]
      update: [{kind: Node, name: node-b, patch: {spec: {unschedulable: true}}}]
      delete: [{kind: Pod, namespace: default, name: web-1}]

Everything is checked when the file is read, so a typo in step 7 fails at once with
the file, document and field, not an hour of virtual time later.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.duration import parse_duration
from kubesched.api.kinds import KINDS, NAMESPACED

API_VERSION = "kubesched.io/v1alpha1"
KIND = "Scenario"
MAX_STEP_TIME = 7 * 24 * 3600.0
"""The latest a step may be: a week of virtual time. Pods left pending are retried every few minutes of it,
so a step a million hours away would keep the simulation busy for hours of real time."""


class ScenarioError(ValueError):
    """A Scenario field that cannot be used; the message starts with the field path."""


@dataclass(frozen=True, slots=True)
class ObjectRef:
    kind: str
    namespace: str
    name: str

    def describe(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


@dataclass(slots=True)
class Update:
    ref: ObjectRef
    patch: dict[str, Any]


@dataclass(slots=True)
class Step:
    at: float
    where: str  # "file, document N, steps[i]" for messages at run time
    create: list[dict[str, Any]] = field(default_factory=list)
    update: list[Update] = field(default_factory=list)
    delete: list[ObjectRef] = field(default_factory=list)


def _ref(raw: Any, path: str) -> ObjectRef:
    if not isinstance(raw, dict):
        raise ScenarioError(f"{path}: expected an object with kind and name")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise ScenarioError(f'{path}.kind: unknown kind "{kind}"')
    name = raw.get("name")
    if not name:
        raise ScenarioError(f"{path}.name: Required value")
    namespace = str(raw.get("namespace") or "default") if kind in NAMESPACED else ""
    return ObjectRef(str(kind), namespace, str(name))


def parse_steps(doc: dict[str, Any], where: str) -> list[tuple[Step, list[tuple[dict[str, Any], str]]]]:
    """The steps of one Scenario, each with its created manifests and their field paths (checked by the loader)."""
    api = doc.get("apiVersion")
    if api != API_VERSION:
        raise ScenarioError(f'apiVersion: Unsupported value: "{api}": supported values: "{API_VERSION}"')
    unknown = set(doc) - {"apiVersion", "kind", "metadata", "steps"}
    if unknown:
        raise ScenarioError(f'{sorted(unknown)[0]}: unknown field "{sorted(unknown)[0]}"')
    steps = doc.get("steps") or []
    if not isinstance(steps, list):
        raise ScenarioError("steps: expected a list")
    out: list[tuple[Step, list[tuple[dict[str, Any], str]]]] = []
    for i, raw in enumerate(steps):
        path = f"steps[{i}]"
        if not isinstance(raw, dict):
            raise ScenarioError(f"{path}: expected an object")
        unknown = set(raw) - {"at", "create", "update", "delete"}
        if unknown:
            raise ScenarioError(f"{path}.{sorted(unknown)[0]}: unknown field (expected at, create, update, delete)")
        if "at" not in raw:
            raise ScenarioError(f"{path}.at: Required value")
        try:
            at = parse_duration(raw["at"])
        except ValueError as err:
            raise ScenarioError(f"{path}.at: {err}") from err
        if not math.isfinite(at) or not 0 <= at <= MAX_STEP_TIME:
            raise ScenarioError(
                f'{path}.at: Invalid value: "{raw["at"]}": must be between 0s and 168h (a week of virtual time)'
            )
        step = Step(at, f"{where}, {path}")
        created: list[tuple[dict[str, Any], str]] = []
        for op in ("create", "update", "delete"):
            items = raw.get(op) or []
            if not isinstance(items, list):
                raise ScenarioError(f"{path}.{op}: expected a list")
            for j, item in enumerate(items):
                item_path = f"{path}.{op}[{j}]"
                if op == "create":
                    if not isinstance(item, dict):
                        raise ScenarioError(f"{item_path}: expected a Kubernetes object")
                    created.append((item, item_path))
                    step.create.append(item)
                elif op == "update":
                    ref = _ref(item, item_path)
                    patch = item.get("patch")
                    if not isinstance(patch, dict):
                        raise ScenarioError(f"{item_path}.patch: expected an object (a JSON merge patch)")
                    step.update.append(Update(ref, patch))
                else:
                    step.delete.append(_ref(item, item_path))
        out.append((step, created))
    return out


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge key by key, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out
