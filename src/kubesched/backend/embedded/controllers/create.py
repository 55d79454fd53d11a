"""What the API server does to a workload it stores, before any controller sees it.

On create: a uid (derived from the key when the input has none), a Job's generated selector,
a DaemonSet's template generation. And the check of a workload's pod template as the API
server validates it, reported against the workload with the template's path. Admission (a
PriorityClass that does not exist) comes when the pods are created, as upstream: a warning.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable

from kubesched.api.kinds import WORKLOAD_KINDS
from kubesched.api.object import Obj
from kubesched.backend.embedded.controllers import daemon_set, job, stateful_set
from kubesched.backend.embedded.controllers.controller_utils import (
    meta,
    name_of,
    namespace_of,
    pod_from_template,
    spec,
    template_of,
)

_SAMPLE_SUFFIX = "xxxxx"  # stands for generateName's random characters in a sample pod


def prepare_for_create(obj: Obj) -> None:
    """What the API server adds to a workload it stores: a uid (derived from the key when the input has none), a
    Job's generated selector and labels, a DaemonSet's template generation."""
    kind = obj.get("kind")
    if kind not in WORKLOAD_KINDS:
        return
    obj_meta = obj.setdefault("metadata", {})
    if not obj_meta.get("uid"):
        digest = hashlib.sha256(f"{kind}/{namespace_of(obj)}/{name_of(obj)}".encode()).hexdigest()
        obj_meta["uid"] = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
    if kind == "Job":
        job.prepare_for_create(obj)
    elif kind == "DaemonSet":
        # The DaemonSet strategy starts templateGeneration at 1; apps/v1 carries it in this annotation.
        annotations = obj_meta.setdefault("annotations", {})
        annotations.setdefault(daemon_set.DEPRECATED_TEMPLATE_GENERATION, "1")


def _sample_pod(obj: Obj) -> tuple[Obj, str] | None:
    """A pod the workload would create, and the path of its template in the workload (None without a template)."""
    kind = obj.get("kind")
    if kind == "CronJob":
        template = spec(obj).get("jobTemplate")
        if not isinstance(template, dict) or not isinstance(spec(template).get("template"), dict):
            return None
        job_obj: Obj = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name_of(obj), "namespace": namespace_of(obj), "uid": str(meta(obj).get("uid") or "")},
            "spec": copy.deepcopy(dict(spec(template))),
        }
        job.generate_selector(job_obj)
        return job.new_pod(job_obj, None), "spec.jobTemplate.spec.template"
    template = template_of(obj)
    if template is None:
        return None
    if kind == "StatefulSet":
        return stateful_set.new_pod(obj, stateful_set.start_ordinal(obj), ""), "spec.template"
    if kind == "DaemonSet":
        return daemon_set.new_pod(obj, "node", ""), "spec.template"
    if kind == "Job":
        return job.new_pod(obj, 0 if job.is_indexed(obj) else None), "spec.template"
    return pod_from_template(template, obj), "spec.template"


def template_problems(obj: Obj, pod_problems: Callable[[Obj], list[str]]) -> list[str]:
    """What validating one of the workload's pods would say, with field paths into the workload's template.

    `pod_problems` checks a pod as the API server validates a pod template.
    """
    sample = _sample_pod(obj)
    if sample is None:
        return []
    pod, path = sample
    pod_meta = pod["metadata"]
    if not pod_meta.get("name"):
        pod_meta["name"] = pod_meta.pop("generateName")[: 63 - len(_SAMPLE_SUFFIX)] + _SAMPLE_SUFFIX
    out = []
    for problem in pod_problems(pod):
        if problem.startswith(("spec.", "metadata.")):
            out.append(f"{path}.{problem}")
        else:
            out.append(f"{path}: {problem}")
    return out
