"""Manifests read once and varied for repeated simulation: what-if questions and sweeps.

Everything here works on plain Kubernetes objects and hands them to `kubesched.simulate`
(the Python API), which loads and admits them as `kubesched simulate` does. The files
are read by the API first, with their names, so a mistake is reported as the command
reports it; the objects read here are then only varied (nodes added from a template,
workloads scaled) and simulated again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.api.kinds import KINDS, SCALED_KINDS
from kubesched.apiserver.admission import identity
from kubesched.apiserver.documents import DocumentError, is_stream, parse_documents
from kubesched.config.trust import UNTRUSTED, Trust
from kubesched.config.types import KIND as CONFIG_KIND
from kubesched.simulator.budget import Budget
from kubesched.simulator.load import LoadError, manifest_files
from kubesched.simulator.node_copy import nodes_like

if TYPE_CHECKING:
    from kubesched.simulator.api import Simulation


class WhatIfError(ValueError):
    """Input a what-if question or a sweep cannot use; the message names the file and the field."""


def simulate_checked(
    *inputs: Any, config_trust: Trust, documents_trust: Trust = UNTRUSTED, budget: Budget | None = None, **kw: Any
) -> Simulation:
    """`kubesched.simulate` within `budget`, with unusable input as a WhatIfError (the API's message names file
    and field).

    `config_trust`: how far the `config` argument may bring in code and extenders (a command's --config
    may; a path in a sweep spec may not). A configuration among the inputs never may (`documents_trust`
    only words the refusal)."""
    from kubesched.simulator.api import InputError, simulate_trusting

    b = budget or Budget()
    try:
        return simulate_trusting(
            config_trust,
            documents_trust,
            *inputs,
            max_pods=b.max_pods,
            max_objects=b.max_objects,
            max_input_bytes=b.max_input_bytes,
            **kw,
        )
    except InputError as err:
        raise WhatIfError(str(err)) from err


def ordered(resources: Iterable[str]) -> list[str]:
    """Resource names as people read them: cpu, memory, then the rest by name."""
    return sorted(set(resources), key=lambda r: (r != "cpu", r != "memory", r))


def utilisation(sim: Simulation) -> dict[str, float | None]:
    """Per resource, the cluster's requested over allocatable (`pods`: pods over pod slots), as the summary has it."""
    return {r: u.utilisation for r, u in sim.summary.resources.items()}


def rereadable(paths: Sequence[str]) -> list[str]:
    """The paths, which repeated simulations read again: standard input and pipes cannot be."""
    for p in paths:
        if p == "-":
            raise WhatIfError("-: standard input cannot be read again for each simulation; save it to a file")
        if is_stream(p):
            raise WhatIfError(f"{p}: a pipe cannot be read again for each simulation; save it to a file")
    return list(paths)


def read_objects(
    paths: Sequence[str], budget: Budget | None = None, overlays: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Every object of the files and directories, in the order `kubesched simulate` reads them, Lists opened;
    then `overlays`' objects in place of those they replace (`with_overlays`)."""
    budget = budget or Budget()
    objects = _read_objects(paths, budget)
    return with_overlays(objects, _read_objects(overlays, budget)) if overlays else objects


def with_overlays(base: Sequence[dict[str, Any]], overlays: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`base` as `kubesched simulate --overlay` combines it with `overlays`: an overlay object takes the place of
    the base object of the same kind, namespace and name (a KubeSchedulerConfiguration, of the base's one), the
    rest come after. Only objects of kinds the store holds, with a name, replace anything (as the loader has it);
    the simulation then checks the combination, and warns of each replacement, again."""
    out = list(base)
    position = {_identity(o): i for i, o in enumerate(out) if _identity(o) is not None}
    for obj in overlays:
        key = _identity(obj)
        if key is not None and key in position:
            out[position[key]] = obj
        else:
            out.append(obj)
            if key is not None:
                position[key] = len(out) - 1
    return out


def _identity(obj: dict[str, Any]) -> tuple[str, str, str] | None:
    """What an overlay object replaces by: the store's key, the one configuration, else nothing."""
    kind = obj.get("kind")
    if kind == CONFIG_KIND:
        return (CONFIG_KIND, "", "")
    if kind in KINDS and name_of(obj):
        return identity(obj)
    return None


def _read_objects(paths: Sequence[str], budget: Budget) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for source, text in _files(paths, budget):
        try:
            docs = parse_documents(text, max_nodes=budget.max_input_nodes)
        except DocumentError as err:
            raise WhatIfError(f"{source}: {err}") from err
        for doc in docs:
            if isinstance(doc, dict):
                out.extend(_opened(doc))
    return out


def _files(paths: Sequence[str], budget: Budget) -> list[tuple[str, str]]:
    try:
        return [file for p in rereadable(paths) for file in manifest_files(p, budget)]
    except LoadError as err:
        raise WhatIfError(str(err)) from err


def _opened(doc: dict[str, Any]) -> list[dict[str, Any]]:
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
        return [item for item in doc["items"] if isinstance(item, dict)]
    return [doc]


def name_of(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return str(meta.get("name") or "")


def key_of(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or meta.get('generateName') or '?'}"


@dataclass(frozen=True)
class NodeTemplate:
    """One Node whose shape (labels, taints, allocatable, images) added nodes copy."""

    path: str
    node: dict[str, Any]

    @property
    def name(self) -> str:
        return name_of(self.node)

    @property
    def allocatable(self) -> dict[str, str]:
        status = self.node.get("status") or {}
        return {str(k): str(v) for k, v in (status.get("allocatable") or status.get("capacity") or {}).items()}

    def nodes(self, count: int, taken: Iterable[str] = ()) -> list[dict[str, Any]]:
        """`count` nodes like the template, its first DNS label tagged `-whatif-<i>` (i from 1, skipping names
        already taken), each its own host."""
        return nodes_like(self.node, count, taken, tag="whatif")


def load_template(path: str, budget: Budget | None = None) -> NodeTemplate:
    """A file holding one Node, checked as `kubesched simulate` checks a node."""
    if not os.path.exists(path):
        raise WhatIfError(f"{path}: no such file or directory")
    simulate_checked(path, record=False, config_trust=UNTRUSTED, budget=budget)
    objects = read_objects([path], budget)
    if len(objects) != 1 or objects[0].get("kind") != "Node":
        found = ", ".join(str(o.get("kind")) for o in objects) or "nothing"
        raise WhatIfError(f"{path}: a node template must hold exactly one Node, found {found}")
    return NodeTemplate(path, objects[0])


def scaled(objects: Sequence[dict[str, Any]], scale: float) -> list[dict[str, Any]]:
    """The workload `scale` times over: replicas, Job parallelism and completions, and pending bare Pods.

    Pods already bound (spec.nodeName), DaemonSets, CronJobs and Scenario steps stay as they
    are (a step that sets replicas sets them as written). Counts round half up. Pending bare
    Pods are copied in document order, named `<name>-x<k>`, until there are round(n * scale)
    of them (the first ones when scale < 1).
    """
    if scale == 1:
        return list(objects)
    out: list[dict[str, Any]] = []
    pending = [o for o in objects if o.get("kind") == "Pod" and not (o.get("spec") or {}).get("nodeName")]
    want = _rounded(len(pending) * scale)
    copies = _pod_copies(pending, want)
    pending_ids = {id(o) for o in pending}
    for obj in objects:
        if id(obj) in pending_ids:
            continue
        kind = obj.get("kind")
        if kind in SCALED_KINDS or kind == "Job":
            obj = _scaled_workload(obj, scale)
        out.append(obj)
    return out + copies


def check_room(objects: Sequence[dict[str, Any]], scale: float, nodes: int, budget: Budget) -> None:
    """Before a variation is built: its bare Pods (pending ones copied by `scale`) within the budget's pods,
    and what it lists (with `nodes` added) within its objects; what workloads make the simulation counts."""
    pods = [o for o in objects if o.get("kind") == "Pod"]
    pending = sum(1 for o in pods if not (o.get("spec") or {}).get("nodeName"))
    copies = pending if scale == 1 else _rounded(pending * scale)
    listed_pods = len(pods) - pending + copies
    if listed_pods > budget.max_pods:
        raise WhatIfError(
            f"scale {scale:g}: {listed_pods:,} pods, over the budget of {budget.max_pods:,} (--max-pods); "
            "raise it with --max-pods N"
        )
    listed = len(objects) - pending + copies + nodes
    if listed > budget.max_objects:
        raise WhatIfError(
            f"{nodes:,} added nodes: {listed:,} objects, over the budget of {budget.max_objects:,} "
            "(--max-objects); raise it with --max-objects N"
        )


def _rounded(x: float) -> int:
    return max(0, int(x + 0.5))


def _pod_copies(pods: list[dict[str, Any]], want: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    round_no = 0
    while len(out) < want and pods:
        for pod in pods:
            if len(out) == want:
                break
            if round_no == 0:
                out.append(pod)
                continue
            meta = dict(pod.get("metadata") or {})
            if meta.get("name"):
                meta["name"] = f"{meta['name']}-x{round_no}"
            meta.pop("uid", None)
            out.append({**pod, "metadata": meta})
        round_no += 1
    return out


def _scaled_workload(obj: dict[str, Any], scale: float) -> dict[str, Any]:
    spec = dict(obj.get("spec") or {})
    if obj.get("kind") == "Job":
        spec["parallelism"] = _rounded(_count(spec.get("parallelism"), 1) * scale)
        if spec.get("completions") is not None:
            spec["completions"] = _rounded(_count(spec.get("completions"), 1) * scale)
    else:
        spec["replicas"] = _rounded(_count(spec.get("replicas"), 1) * scale)
    return {**obj, "spec": spec}


def _count(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
