"""The Job controller (pkg/controller/job): as many active pods as the Job wants now.

It wants `min(parallelism, completions - succeeded)` (`parallelism` without
completions), none when suspended or finished. Pods get the template (whose labels
the API server completed with `batch.kubernetes.io/job-name`,
`batch.kubernetes.io/controller-uid` and the legacy `job-name`, `controller-uid`) and
the `batch.kubernetes.io/job-tracking` finalizer. In Indexed mode each pod takes the
lowest index neither active nor completed: `generateName: <job>-<index>-`, hostname
`<job>-<index>`, the `batch.kubernetes.io/job-completion-index` annotation and label,
and JOB_COMPLETION_INDEX in every container. No kubelet runs here, so pods never finish:
the Job stays at its first wave. A Job whose `managedBy` names another controller is
left alone.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.object import Obj, ObjView
from kubesched.backend.embedded.controllers.controller_utils import (
    Plan,
    active_pods_order,
    is_being_deleted,
    is_pod_active,
    meta,
    name_of,
    pod_from_template,
    pods_prefix,
    spec,
    template_of,
    uid_of,
)

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
JOB_CONTROLLER = "kubernetes.io/job-controller"
MAX_GENERATED_NAME_LENGTH = 58


def prepare_for_create(job: Obj) -> None:
    """The Job strategy's PrepareForCreate, then the Job's labels defaulted from its template, as it is stored."""
    generate_selector(job)
    template = job.get("spec", {}).get("template")
    labels = (template.get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    job_meta = job.setdefault("metadata", {})
    if labels is not None and not job_meta.get("labels"):
        job_meta["labels"] = dict(labels)


def generate_selector(job: Obj) -> None:
    """Without manualSelector: the job-name and controller-uid labels on the template, a controller-uid selector."""
    job_spec = job.setdefault("spec", {})
    if job_spec.get("manualSelector") is True:
        return
    template = job_spec.setdefault("template", {})
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name_of(job))
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid_of(job))
    selector = job_spec.get("selector")
    if not isinstance(selector, dict):
        selector = job_spec["selector"] = {}
    match_labels = selector.setdefault("matchLabels", {})
    match_labels.setdefault(CONTROLLER_UID_LABEL, uid_of(job))


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def is_finished(job: ObjView) -> bool:
    return any(
        isinstance(c, Mapping) and c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or ()
    )


def is_indexed(job: ObjView) -> bool:
    return spec(job).get("completionMode") == "Indexed"


def completion_index(pod: ObjView) -> int:
    raw = (meta(pod).get("annotations") or {}).get(COMPLETION_INDEX)
    return int(raw) if isinstance(raw, str) and raw.isdigit() else -1


def parse_indexes(text: Any) -> set[int]:
    """status.completedIndexes ("1,3-5") as a set; anything unreadable counts as none."""
    out: set[int] = set()
    for part in str(text or "").split(","):
        first, _, last = part.strip().partition("-")
        if first.isdigit() and (not last or last.isdigit()):
            out.update(range(int(first), int(last or first) + 1))
    return out


def _index_env(container: Obj) -> None:
    env = [e for e in container.get("env") or () if isinstance(e, Mapping)]
    if any(e.get("name") == COMPLETION_INDEX_ENV for e in env):
        return
    field_path = f"metadata.labels['{COMPLETION_INDEX}']"
    container["env"] = [*env, {"name": COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}]


def _generate_name_with_index(job_name: str, index: int) -> str:
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[: MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


def new_pod(job: ObjView, index: int | None) -> Obj:
    template = copy.deepcopy(dict(template_of(job) or {}))
    tmeta = template.setdefault("metadata", {})
    finalizers = list(tmeta.get("finalizers") or ())
    if TRACKING_FINALIZER not in finalizers:
        tmeta["finalizers"] = [*finalizers, TRACKING_FINALIZER]
    if index is None:
        return pod_from_template(template, job, pods_prefix(name_of(job)))
    template_spec = template.setdefault("spec", {})
    for group in ("initContainers", "containers"):
        for c in template_spec.get(group) or ():
            if isinstance(c, dict):
                _index_env(c)
    tmeta["annotations"] = {**(tmeta.get("annotations") or {}), COMPLETION_INDEX: str(index)}
    tmeta["labels"] = {**(tmeta.get("labels") or {}), COMPLETION_INDEX: str(index)}
    template_spec["hostname"] = f"{name_of(job)}-{index}"
    return pod_from_template(template, job, _generate_name_with_index(name_of(job), index))


def _for_removal(job: ObjView, active: Sequence[ObjView], count: int) -> list[ObjView]:
    """activePodsForRemoval: in Indexed mode out-of-range and duplicate indexes first, then ActivePods order."""
    if count <= 0:
        return []
    remove: list[ObjView] = []
    left = list(active)
    if is_indexed(job):
        completions = _int(spec(job).get("completions"), 0)
        by_index: dict[int, list[ObjView]] = {}
        for pod in active:
            by_index.setdefault(completion_index(pod), []).append(pod)
        left = []
        for ix, same in sorted(by_index.items()):
            if ix < 0 or ix >= completions:
                remove += same
                continue
            ordered = active_pods_order(same)  # of pods sharing an index, the one best kept comes last
            remove += ordered[:-1]
            left.append(ordered[-1])
    if len(remove) < count:
        remove += active_pods_order(left)[: count - len(remove)]
    return remove


def sync(job: ObjView, pods: Sequence[ObjView]) -> Plan:
    """manageJob for a Job that is not finished; `pods` are those it owns."""
    managed_by = spec(job).get("managedBy")
    if template_of(job) is None or is_being_deleted(job) or is_finished(job):
        return Plan()
    if managed_by not in (None, "", JOB_CONTROLLER):
        return Plan()
    active = [p for p in pods if is_pod_active(p)]
    if spec(job).get("suspend") is True:
        return Plan(delete=active_pods_order(active))
    parallelism = _int(spec(job).get("parallelism"), 1)
    completions = spec(job).get("completions")
    succeeded = _int((job.get("status") or {}).get("succeeded"), 0)
    if not isinstance(completions, int) or isinstance(completions, bool):
        want = len(active) if succeeded > 0 else parallelism
    else:
        want = max(0, min(completions - succeeded, parallelism))
    if len(active) > want:
        return Plan(delete=_for_removal(job, active, len(active) - want))
    missing = want - len(active)
    if missing <= 0:
        return Plan()
    if not is_indexed(job):
        return Plan(create=[new_pod(job, None) for _ in range(missing)])
    taken = {completion_index(p) for p in active} | parse_indexes((job.get("status") or {}).get("completedIndexes"))
    completions_n = _int(completions, 0)
    indexes = list(itertools.islice((i for i in range(completions_n) if i not in taken), missing))
    return Plan(create=[new_pod(job, i) for i in indexes])
