"""Reading manifests for the simulator: files, directories and stdin, with errors that name the spot.

Every object is checked the way the scheduler will read it (quantities, selectors,
priority classes), so a bad manifest fails before the simulation starts with
`file, document N (Kind ns/name): field: problem`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.errors import FieldError
from kubesched.backend.embedded import KINDS, NAMESPACED
from kubesched.config.types import KIND as CONFIG_KIND
from kubesched.framework.node_info import parse_node
from kubesched.framework.types import new_pod_info
from kubesched.simulator.scenario import KIND as SCENARIO_KIND
from kubesched.simulator.scenario import ScenarioError, Step, parse_steps

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader

SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


class LoadError(ValueError):
    """Unusable input; the message names file, document, object and field."""


@dataclass(slots=True)
class SourcedObject:
    obj: dict[str, Any]
    source: str
    document: int
    path: str = ""  # where inside the document, for objects created by Scenario steps

    def describe(self) -> str:
        kind = self.obj.get("kind", "?")
        meta = self.obj.get("metadata") or {}
        name = meta.get("name") or meta.get("generateName") or "?"
        ns = meta.get("namespace") or ("default" if kind in NAMESPACED else "")
        ident = f"{ns}/{name}" if ns else str(name)
        where = f", {self.path}" if self.path else ""
        return f"{self.source}, document {self.document}{where} ({kind} {ident})"


@dataclass(slots=True)
class LoadedInput:
    objects: list[SourcedObject] = field(default_factory=list)
    config: dict[str, Any] | None = None
    config_source: str = ""
    steps: list[Step] = field(default_factory=list)  # Scenario steps, in document order
    step_objects: list[SourcedObject] = field(default_factory=list)  # what the steps create


def _files(paths: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for p in paths:
        if p == "-":
            out.append(("<stdin>", sys.stdin.read()))
            continue
        path = Path(p)
        if path.is_dir():
            for f in sorted(path.rglob("*")):
                if f.is_file() and f.suffix in MANIFEST_SUFFIXES:
                    out.append((str(f), _read(f)))
        elif path.is_file():
            out.append((str(path), _read(path)))
        else:
            raise LoadError(f"{p}: no such file or directory")
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise LoadError(f"{path}: cannot read: {err}") from err


def load_manifests(paths: list[str]) -> LoadedInput:
    loaded = LoadedInput()
    for source, text in _files(paths):
        try:
            docs = list(yaml.load_all(text, Loader=_Loader))
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
            problem = getattr(err, "problem", None) or str(err)
            raise LoadError(f"{source}: invalid YAML{where}: {problem}") from err
        for i, doc in enumerate(docs, start=1):
            if doc is None:
                continue
            if not isinstance(doc, dict):
                raise LoadError(
                    f"{source}, document {i}: expected a Kubernetes object (a mapping), got {type(doc).__name__}"
                )
            _add_document(loaded, doc, source, i)
    return loaded


def _add_document(loaded: LoadedInput, doc: dict[str, Any], source: str, index: int) -> None:
    kind = doc.get("kind")
    if kind == CONFIG_KIND:
        if loaded.config is not None:
            raise LoadError(
                f"{source}, document {index}: a second KubeSchedulerConfiguration (first in {loaded.config_source})"
            )
        loaded.config = doc
        loaded.config_source = f"{source}, document {index}"
        return
    if kind == SCENARIO_KIND:
        name = (doc.get("metadata") or {}).get("name") or "?"
        where = f"{source}, document {index}"
        try:
            parsed = parse_steps(doc, where)
        except ScenarioError as err:
            raise LoadError(f"{where} (Scenario {name}): {err}") from err
        for step, created in parsed:
            loaded.steps.append(step)
            for obj, path in created:
                loaded.step_objects.append(_checked(SourcedObject(obj, source, index, path), ""))
        return
    if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in doc):
        for j, item in enumerate(doc.get("items") or []):
            if not isinstance(item, dict):
                raise LoadError(f"{source}, document {index}: items[{j}]: expected an object")
            loaded.objects.append(_checked(SourcedObject(item, source, index), f"items[{j}]."))
        return
    loaded.objects.append(_checked(SourcedObject(doc, source, index), ""))


def _checked(so: SourcedObject, prefix: str) -> SourcedObject:
    """A supported kind with a name (or generateName); anything else names the spot."""
    kind = so.obj.get("kind")
    if not kind:
        raise LoadError(f"{so.source}, document {so.document}: {prefix}kind: Required value")
    if kind not in KINDS:
        supported = ", ".join(sorted(KINDS | {CONFIG_KIND, "List"}))
        raise LoadError(f'{so.describe()}: {prefix}kind: unknown kind "{kind}" (supported: {supported})')
    meta = so.obj.get("metadata")
    if not isinstance(meta, dict) or not (meta.get("name") or meta.get("generateName")):
        raise LoadError(f"{so.describe()}: {prefix}metadata.name: Required value")
    return so


def prepare_objects(loaded: LoadedInput) -> list[SourcedObject]:
    """Name generated objects, resolve pod priorities as admission would, and check what the scheduler reads.

    Objects that Scenario steps create are prepared too (they are checked before anything runs).
    """
    classes = dict(SYSTEM_PRIORITY_CLASSES)
    global_default: int | None = None
    counters: dict[str, int] = {}
    everything = [*loaded.objects, *loaded.step_objects]
    for so in everything:
        meta = so.obj["metadata"]
        if not meta.get("name"):
            prefix = meta["generateName"]
            counters[prefix] = counters.get(prefix, 0) + 1
            meta["name"] = f"{prefix}{counters[prefix]:05d}"
        if so.obj["kind"] == "PriorityClass":
            try:
                classes[meta["name"]] = int(so.obj.get("value", 0))
            except (TypeError, ValueError) as err:
                raise LoadError(f"{so.describe()}: value: must be an integer") from err
            if so.obj.get("globalDefault"):
                global_default = classes[meta["name"]]
    for so in everything:
        kind = so.obj["kind"]
        try:
            if kind == "Pod":
                _admit_pod(so.obj, classes, global_default)
                new_pod_info(so.obj)
            elif kind == "Node":
                parse_node(so.obj)
        except FieldError as err:
            raise LoadError(f"{so.describe()}: {err}") from err
        except (TypeError, ValueError, AttributeError) as err:
            raise LoadError(f"{so.describe()}: {err}") from err
    return loaded.objects


def _admit_pod(pod: dict[str, Any], classes: dict[str, int], global_default: int | None) -> None:
    spec = pod.get("spec")
    if spec is None:
        spec = pod["spec"] = {}
    if not isinstance(spec, dict):
        raise FieldError("spec", "must be an object")
    name = spec.get("priorityClassName")
    if name:
        if name not in classes:
            raise FieldError("spec.priorityClassName", f'no PriorityClass with name "{name}" was found')
        spec.setdefault("priority", classes[name])
    elif "priority" not in spec and global_default is not None:
        spec["priority"] = global_default
    if spec.get("priority") is not None and not isinstance(spec["priority"], int):
        raise FieldError("spec.priority", f'"{spec["priority"]}" must be an integer')
