"""Reading manifests for the simulator: files, directories and stdin, with errors that name the spot.

kubesched stands in for the API server here, so every object goes through what
kube-apiserver v1.36 would do on `kubectl apply` before the scheduler sees it:
strict decoding (schema.py), defaulting (defaulting.py), the admission plugins that
change what the scheduler reads (Priority, DefaultTolerationSeconds,
DefaultStorageClass), validation (validation.py), and the store's uniqueness of
names. Anything refused stops the run with
`file, document N (Kind ns/name): field: problem`, in the API server's words.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kubesched.api.errors import FieldError
from kubesched.api.kinds import KINDS, NAMESPACED, WORKLOAD_KINDS
from kubesched.api.selectors import parse_node_selector
from kubesched.apiserver import admission
from kubesched.apiserver.defaulting import set_defaults
from kubesched.apiserver.documents import (
    DocumentError,
    LoadError,
    decode_text,
    is_stream,
    iter_documents,
    over_bytes,
    read_bytes,
    read_text,
)
from kubesched.apiserver.memo import ContentMemo, pinned_shape, share_specs
from kubesched.apiserver.schema import KINDS as SCHEMA_KINDS
from kubesched.apiserver.schema import decode_errors
from kubesched.apiserver.validation import SYSTEM_PRIORITY_CLASSES, validate
from kubesched.backend.embedded.controllers.create import prepare_for_create, template_problems
from kubesched.config.goduration import go_quote
from kubesched.config.types import KIND as CONFIG_KIND
from kubesched.framework.node_info import parse_node
from kubesched.framework.types import PodInfo, new_pod_info, pod_own_fields
from kubesched.release import recorded_version
from kubesched.simulator import helm
from kubesched.simulator.budget import Budget, check, check_objects_read, expansion
from kubesched.simulator.scenario import KIND as SCENARIO_KIND
from kubesched.simulator.scenario import ScenarioError, Step, parse_steps
from kubesched.simulator.unused_kinds import skipped_warning, unused_kind

__all__ = [
    "SYSTEM_PRIORITY_CLASSES",
    "LoadError",
    "LoadedInput",
    "SourcedObject",
    "add_document",
    "finish_loading",
    "load_manifests",
    "manifest_files",
    "prepare_objects",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
SCHEDULED_KINDS = frozenset({"Node", "Pod", *WORKLOAD_KINDS})  # without any, the result is empty
NAMED_FILES = 5  # an empty input's warning names this many files, then counts the rest


@dataclass(slots=True)
class SourcedObject:
    obj: dict[str, Any]
    source: str
    document: int
    path: str = ""  # where inside the document: list items, objects created by Scenario steps
    overlay: bool = False  # read from an --overlay file: replaces an object of the same kind, namespace and name
    info: PodInfo | None = None  # a pod as admission parsed it, handed to the informer instead of parsing again

    def where(self) -> str:
        inside = f", {self.path}" if self.path else ""
        return f"{self.source}, document {self.document}{inside}"

    def describe(self) -> str:
        kind = self.obj.get("kind")
        kind = kind if isinstance(kind, str) and kind else "?"
        meta = self.obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        name = meta.get("name") or meta.get("generateName") or "?"
        ns = meta.get("namespace") or ("default" if kind in NAMESPACED else "")
        ident = f"{ns}/{name}" if ns and isinstance(ns, str) else str(name)
        if not ident.isprintable():  # a name with a newline must not split the one-line error it is named in
            ident = go_quote(ident)
        return f"{self.where()} ({kind if kind.isprintable() else go_quote(kind)} {ident})"


@dataclass(slots=True)
class LoadedInput:
    objects: list[SourcedObject] = field(default_factory=list)
    config: dict[str, Any] | None = None
    config_source: str = ""
    config_overlay: bool = False  # the configuration came from an --overlay file
    sources: list[str] = field(default_factory=list)  # the texts read (files, stdin), for the empty-input warning
    steps: list[Step] = field(default_factory=list)  # Scenario steps, in document order
    step_objects: list[SourcedObject] = field(default_factory=list)  # what the steps create
    warnings: list[str] = field(default_factory=list)  # what prepare_objects noticed, for the result
    skipped: dict[str, int] = field(default_factory=dict)  # objects of kinds kubesched does not use, by kind
    admission: admission.Context | None = None  # what prepare_objects admitted against, for objects made later
    budget: Budget = field(default_factory=Budget)  # the most the simulation may read, hold and create
    cluster_version: tuple[str, str] | None = None  # (source, gitVersion) a `kubesched snapshot` file recorded


def manifest_files(p: str, budget: Budget | None = None) -> Iterator[tuple[str, str]]:
    """(name, text) of a file, or of a directory's manifests at any depth in sorted order, as `kubesched
    simulate` reads them; each read as it is reached, to at most the budget's bytes."""
    limit = (budget or Budget()).max_input_bytes
    path = Path(p)
    if path.is_dir():
        if (path / helm.CHART_FILE).is_file():
            raise LoadError(helm.chart_message(path))
        for f in sorted(path.rglob("*")):
            if f.is_file() and f.suffix in MANIFEST_SUFFIXES:
                if f.name == helm.CHART_FILE:  # a chart among the manifests, e.g. under charts/
                    raise LoadError(helm.chart_message(f.parent))
                yield str(f), read_text(f, limit)
    elif path.name == helm.CHART_FILE and path.is_file():
        raise LoadError(helm.chart_message(path.parent))
    elif path.is_file() or is_stream(p):
        yield str(path), read_text(path, limit)
    elif path.exists():
        raise LoadError(f"{p}: not a file, a directory or a pipe")
    else:
        raise LoadError(f"{p}: no such file or directory")


def _files(paths: list[str], budget: Budget) -> Iterator[tuple[str, str]]:
    """Each input's text in turn, so that only one is held unparsed at a time."""
    for p in paths:
        if p == "-":
            yield "<stdin>", _read_stdin(budget.max_input_bytes)
        else:
            yield from manifest_files(p, budget)


def _read_once(paths: list[str], overlays: list[str]) -> None:
    """Standard input can be read once: `-` twice would read nothing the second time."""
    if [*paths, *overlays].count("-") > 1:
        raise LoadError("-: standard input can be given only once")


def _read_stdin(limit: int) -> str:
    raw = getattr(sys.stdin, "buffer", None)
    if raw is None:  # replaced by a text stream (tests)
        text = sys.stdin.read(limit + 1)
        if len(text) > limit:
            raise over_bytes("<stdin>", limit)
        return text
    return decode_text("<stdin>", read_bytes(raw, "<stdin>", limit))


def load_manifests(
    paths: list[str], overlays: list[str] | None = None, *, finish: bool = True, budget: Budget | None = None
) -> LoadedInput:
    """Every document of the files, in order, then of `overlays` (whose objects replace those of the same
    kind, namespace and name when prepare_objects admits them); `finish=False` leaves room for more (see
    `finish_loading`). `budget` bounds what is read and what the simulation may create."""
    overlays = overlays or []
    _read_once(paths, overlays)
    loaded = LoadedInput(budget=budget or Budget())
    for files, overlay in ((paths, False), (overlays, True)):
        for source, text in _files(files, loaded.budget):
            add_text(loaded, source, text, overlay)
    if finish:
        finish_loading(loaded, [*paths, *overlays])
    return loaded


def add_text(loaded: LoadedInput, source: str, text: str, overlay: bool = False) -> None:
    """Every document of one YAML or JSON text, named `source` in errors."""
    loaded.sources.append(source)
    version = recorded_version(text)
    if version is not None and loaded.cluster_version is None:
        loaded.cluster_version = (source, version)
    docs = iter_documents(text, max_nodes=loaded.budget.max_input_nodes)
    for i, doc in enumerate(_located(docs, source, text), start=1):
        if doc is None:
            continue
        if not isinstance(doc, dict) or not doc.get("kind"):
            _not_a_template(source, text)
        if not isinstance(doc, dict):
            raise LoadError(
                f"{source}, document {i}: expected a Kubernetes object (a mapping), got {type(doc).__name__}"
            )
        add_document(loaded, doc, source, i, overlay)


def _located(docs: Iterator[Any], source: str, text: str) -> Iterator[Any]:
    """The documents, with a problem in the text named by its source."""
    try:
        yield from docs
    except DocumentError as err:
        _not_a_template(source, text)
        raise LoadError(f"{source}: {err}") from err


def _not_a_template(source: str, text: str) -> None:
    """A text that does not load and holds Helm template actions is a chart's template: say how to render it."""
    message = helm.template_message(source, text)
    if message:
        raise LoadError(message)


def finish_loading(loaded: LoadedInput, given: list[str] | None = None) -> None:
    """Once every document is in: the one warning that counts the objects of kinds kubesched does not use,
    and one when there is nothing to schedule on or to schedule (`given`: the paths asked for)."""
    if loaded.skipped:
        loaded.warnings.append(skipped_warning(loaded.skipped))
    if not any(so.obj["kind"] in SCHEDULED_KINDS for so in (*loaded.objects, *loaded.step_objects)):
        loaded.warnings.append(_nothing_found(loaded.sources, given or []))


def _nothing_found(sources: list[str], given: list[str]) -> str:
    """The warning for an input without nodes, pods or workloads: the result will be empty."""
    if not sources and given:
        return f"no nodes or pods found: no {', '.join(MANIFEST_SUFFIXES)} file in {', '.join(given)}"
    if not sources:
        return "no nodes or pods found in the input: nothing to schedule"
    names = ", ".join(sources[:NAMED_FILES])
    if len(sources) > NAMED_FILES:
        names += f" and {len(sources) - NAMED_FILES} more file(s)"
    return f"no nodes or pods found in {names}: nothing to schedule"


def add_document(loaded: LoadedInput, doc: dict[str, Any], source: str, index: int, overlay: bool = False) -> None:
    kind = doc.get("kind")
    if kind == CONFIG_KIND:
        where = f"{source}, document {index}"
        if loaded.config is not None:
            if not overlay or loaded.config_overlay:
                raise LoadError(f"{where}: a second KubeSchedulerConfiguration (first in {loaded.config_source})")
            loaded.warnings.append(f"{where} (KubeSchedulerConfiguration) replaces the one in {loaded.config_source}")
        loaded.config = doc
        loaded.config_source = where
        loaded.config_overlay = overlay
        return
    if kind == SCENARIO_KIND:
        meta = doc.get("metadata")
        name = (meta.get("name") if isinstance(meta, dict) else None) or "?"
        where = f"{source}, document {index}"
        try:
            parsed = parse_steps(doc, where)
        except ScenarioError as err:
            raise LoadError(f"{where} (Scenario {name}): {err}") from err
        for step, created in parsed:
            loaded.steps.append(step)
            for obj, path in created:
                checked = _checked(SourcedObject(obj, source, index, path, overlay), loaded)
                if checked is None:
                    step.create[:] = [o for o in step.create if o is not obj]
                else:
                    loaded.step_objects.append(checked)
                    count = len(loaded.objects) + len(loaded.step_objects)
                    check_objects_read(count, loaded.budget, checked.describe)
        return
    if _is_list(doc):
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise LoadError(f"{source}, document {index}: items: expected a list of objects")
        item_kind = "" if kind == "List" else str(kind).removesuffix("List")
        for j, item in enumerate(items):
            if not isinstance(item, dict):
                raise LoadError(f"{source}, document {index}: items[{j}]: expected an object")
            if _is_list(item):
                raise LoadError(
                    f"{source}, document {index}, items[{j}]: a {item.get('kind')} inside a List is not supported "
                    "(kubectl apply refuses it too): give its items in the outer List's items"
                )
            if item_kind:
                _typed_item(item, item_kind, doc.get("apiVersion"))
            _append(loaded, _checked(SourcedObject(item, source, index, f"items[{j}]", overlay), loaded))
        return
    _append(loaded, _checked(SourcedObject(doc, source, index, overlay=overlay), loaded))


def _is_list(doc: dict[str, Any]) -> bool:
    """A `List`, or a `<Kind>List` with its `items`, as kubectl unwraps them."""
    kind = doc.get("kind")
    return kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in doc)


def _typed_item(item: dict[str, Any], kind: str, list_api_version: Any) -> None:
    """An item of a `<Kind>List` as the API server returns it (`GET /api/v1/nodes`) carries no kind or
    apiVersion of its own: the list's kind and group version imply them, as client-go decodes them."""
    if not item.get("kind"):
        item["kind"] = kind
    if not item.get("apiVersion"):
        api_version = list_api_version if isinstance(list_api_version, str) and list_api_version else None
        api_version = api_version or SCHEMA_KINDS.get(kind)
        if api_version:
            item["apiVersion"] = api_version


def _append(loaded: LoadedInput, so: SourcedObject | None) -> None:
    if so is not None:
        loaded.objects.append(so)
        check_objects_read(len(loaded.objects) + len(loaded.step_objects), loaded.budget, so.describe)


def _checked(so: SourcedObject, loaded: LoadedInput) -> SourcedObject | None:
    """A supported kind with a name (or generateName); None for a kind kubesched does not use (counted in
    `loaded.skipped`); anything else names the spot."""
    kind = so.obj.get("kind")
    if not kind:
        raise LoadError(f"{so.where()}: kind: Required value")
    unused = unused_kind(so.obj) if isinstance(kind, str) and kind not in KINDS else ""
    if unused:
        loaded.skipped[unused] = loaded.skipped.get(unused, 0) + 1
        return None
    if _is_list(so.obj):  # a List where only objects go (a Scenario step's create)
        raise LoadError(f"{so.where()}: kind: a {kind} is not an object: give its items one by one")
    if not isinstance(kind, str) or kind not in KINDS:
        supported = ", ".join(sorted(KINDS | {CONFIG_KIND, "List"}))
        raise LoadError(f'{so.describe()}: kind: unknown kind "{kind}" (supported: {supported})')
    meta = so.obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        problems = decode_errors(so.obj)
        raise LoadError(f"{so.describe()}: {problems[0] if problems else 'metadata: expected an object'}")
    if not meta or not (meta.get("name") or meta.get("generateName")):
        raise LoadError(f"{so.describe()}: metadata.name: Required value")
    return so


def prepare_objects(loaded: LoadedInput) -> list[SourcedObject]:
    """Admit every object as the API server would on create; returns those the scheduler's informers see.

    Objects that Scenario steps create are admitted too (before anything runs), against
    the classes the files define. Succeeded and Failed pods are left out (kube-scheduler
    does not watch them); what else was noticed goes to `loaded.warnings`.
    """
    for so in [*loaded.objects, *loaded.step_objects]:
        _check(so, decode_errors(so.obj))
    _apply_overlays(loaded)
    everything = [*loaded.objects, *loaded.step_objects]
    counters: dict[str, int] = {}
    for so in everything:
        meta = so.obj["metadata"]
        if not meta.get("name"):
            prefix = meta["generateName"]
            counters[prefix] = counters.get(prefix, 0) + 1
            meta["name"] = f"{prefix}{counters[prefix]:05d}"
    _unique(loaded.objects)  # an object given twice is the mistake to name, before what the second one breaks
    for so in everything:
        set_defaults(so.obj)
    context = admission.Context.of([so.obj for so in everything])
    context.global_default_source = _global_default_source(everything, context.global_default)
    parsed: ContentMemo[PodInfo] = ContentMemo()
    for so in everything:
        _check(so, context.admit(so.obj))
        _check(so, validate(so.obj))
        _check(so, context.validate_admission(so.obj))
        _parse(so, parsed)
    admission.distinct_uids([so.obj for so in everything])
    for so in everything:
        if so.info is not None and so.info.uid != so.obj["metadata"].get("uid", so.info.uid):
            so.info = None  # its uid was taken: the informer parses it again
    share_specs(so.obj for so in everything)
    _check_budget(loaded, everything)
    for so in everything:
        if so.obj["kind"] in WORKLOAD_KINDS:
            prepare_for_create(so.obj)
            _check(so, template_problems(so.obj, _template_pod_problems))
    loaded.admission = context
    nodes = {so.obj["metadata"]["name"] for so in everything if so.obj["kind"] == "Node"}
    kept, warnings = admission.informer_view([so.obj for so in loaded.objects], nodes)
    loaded.warnings.extend(warnings)
    keep = {id(obj) for obj in kept}
    return [so for so in loaded.objects if id(so.obj) in keep]


def _global_default_source(objects: list[SourcedObject], name: str) -> str:
    """Where the PriorityClass that is the global default was read, for the refusal of a second one."""
    for so in objects:
        if so.obj.get("kind") == "PriorityClass" and so.obj["metadata"].get("name") == name:
            return so.where()
    return ""


def _check_budget(loaded: LoadedInput, everything: list[SourcedObject]) -> None:
    """Before any workload makes a pod: the pods and objects the whole run will hold, within the budget."""
    scaled = [
        ((upd.ref.kind, upd.ref.namespace, upd.ref.name), upd.patch)
        for step in sorted(loaded.steps, key=lambda st: st.at)
        for upd in step.update
        if upd.ref.kind in WORKLOAD_KINDS
    ]
    check(expansion([so.obj for so in everything], scaled), loaded.budget)


def _unique(objects: list[SourcedObject], overlay_hint: bool = True) -> None:
    """One object per kind, namespace and name, or a LoadError naming both places (and, when they are
    two files, how to let one replace the other's objects)."""
    try:
        admission.check_unique([(so.obj, so.where()) for so in objects])
    except admission.AdmissionError as err:
        later = next(so for so in objects if so.where() == err.where)
        hint = ""
        if overlay_hint and not later.overlay and err.first.partition(", document ")[0] != later.source:
            hint = f"; to let {later.source} replace objects, give it with --overlay"
        raise LoadError(f"{err.where} ({err.kind} {err.ident}): {err}{hint}") from err


def _apply_overlays(loaded: LoadedInput) -> None:
    """Objects from --overlay files take the place of the FILEs' objects of the same kind, namespace and
    name (or are added at the end), each replacement warned about; a duplicate among the FILEs, or among
    the overlays, stays an error. Objects named by generateName never replace anything."""
    base = [so for so in loaded.objects if not so.overlay]
    overlays = [so for so in loaded.objects if so.overlay]
    if not overlays:
        return
    named = [so for so in base if so.obj["metadata"].get("name")]
    _unique(named)
    _unique([so for so in overlays if so.obj["metadata"].get("name")], overlay_hint=False)
    position = {admission.identity(so.obj): i for i, so in enumerate(base) if so.obj["metadata"].get("name")}
    for so in overlays:
        key = admission.identity(so.obj) if so.obj["metadata"].get("name") else None
        i = position.get(key) if key is not None else None
        if i is None:
            base.append(so)
            continue
        loaded.warnings.append(f"{so.describe()} replaces the object in {base[i].where()}")
        base[i] = so
    loaded.objects = base


def _template_pod_problems(pod: dict[str, Any]) -> list[str]:
    """The API server's validation of a workload's pod template (admission comes when the pods are created)."""
    set_defaults(pod)
    problems = validate(pod)
    if problems:
        return problems
    try:
        new_pod_info(pod)
    except (FieldError, TypeError, ValueError, AttributeError) as err:
        return [str(err)]
    return []


def create_problems(obj: dict[str, Any], context: admission.Context) -> list[str]:
    """What the API server says to an object a controller creates (after filling its defaults); [] when it takes it."""
    problems = decode_errors(obj)
    if problems:
        return problems
    set_defaults(obj)
    problems = context.admit(obj) + validate(obj) + context.validate_admission(obj)
    if problems:
        return problems
    try:
        if obj["kind"] == "Pod":
            new_pod_info(obj)
    except (FieldError, TypeError, ValueError, AttributeError) as err:
        return [str(err)]
    return []


def _check(so: SourcedObject, problems: list[str]) -> None:
    if problems:
        raise LoadError(f"{so.describe()}: {_aggregate(problems)}")


def _aggregate(problems: list[str]) -> str:
    return problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"


def _parse(so: SourcedObject, parsed: ContentMemo[PodInfo] | None = None) -> None:
    """Last, the scheduler's own reading of what it parses (nothing valid should fail here); `parsed`
    remembers pods' parses by content (see `pod_info`)."""
    try:
        if so.obj["kind"] == "Pod":
            so.info = new_pod_info(so.obj) if parsed is None else pod_info(so.obj, parsed)
        elif so.obj["kind"] == "Node":
            parse_node(so.obj)
    except (FieldError, TypeError, ValueError, AttributeError) as err:
        raise LoadError(f"{so.describe()}: {err}") from err


def pod_info(pod: dict[str, Any], parsed: ContentMemo[PodInfo]) -> PodInfo:
    """new_pod_info(pod), parsing each distinct (spec, status, namespace, labels) once.

    A workload's replicas differ only in metadata: the constraints, requests and terms of
    the first replica's parse are the answer for every one, and the fields read from
    metadata are the pod's own (pod_own_fields, as new_pod_info reads them). The dicts a PodInfo holds
    are the pod's own; its tuples of frozen terms are shared, as the term cache shares them.
    `parsed` must not outlive admission: a PodInfo the scheduler changed would be copied.
    Pods pinned to their nodes share a parse by their spec's shape (see pinned_shape): the
    required node affinity, the one field that reads the node's name, is each pod's own parse.
    """
    meta = pod.get("metadata") or {}
    spec: Any = pod.get("spec")
    pinned = pinned_shape(spec)
    key = ContentMemo.key(
        spec if pinned is None else pinned[0], pod.get("status"), meta.get("namespace"), meta.get("labels")
    )
    first = parsed.get(key)
    if first is None:
        info = new_pod_info(pod)
        parsed.put(key, info)
        return info
    own = pod_own_fields(pod)
    if pinned is not None:
        own["required_node_affinity"] = parse_node_selector(
            spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        )
    return replace(first, obj=pod, requests=dict(first.requests), node_selector=dict(first.node_selector), **own)


def admit_update(obj: dict[str, Any]) -> str:
    """What the API server would say to an update that leaves `obj` ('' when it takes it); fills defaults."""
    problems = decode_errors(obj)
    if not problems:
        set_defaults(obj)
        problems = validate(obj)
    if not problems:
        try:
            if obj["kind"] == "Pod":
                new_pod_info(obj)
            elif obj["kind"] == "Node":
                parse_node(obj)
        except (FieldError, TypeError, ValueError, AttributeError) as err:
            return str(err)
    return _aggregate(problems) if problems else ""
