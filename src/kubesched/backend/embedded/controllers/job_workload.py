"""WorkloadWithJob (v1.36 alpha): the Job controller makes a gang of an Indexed Job (job_scheduling_manager.go).

A new Indexed Job with parallelism > 1, completions equal to parallelism and a template
that names no group of its own gets a Workload (one PodGroupTemplate, a gang of
`parallelism`) and a PodGroup from that template, both owned by the Job, before its pods
are made; each pod then names the PodGroup in spec.schedulingGroup and lists it among its
owners. A Job that already has pods, or that someone else's Workload names, is left to
plain scheduling, as upstream leaves it.

The names follow upstream's pattern (`<job>-<hash>` and `<workload>-<template>-<hash>`,
FNV-32a hashes in the API server's safe alphabet); the Workload's hash is taken over the
Job's uid as text, where upstream hashes the Go value's printed form, so the hash part
may differ from a real cluster's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from kubesched.api.object import Obj, ObjView
from kubesched.backend.embedded.controllers.controller_utils import Plan, meta, name_of, namespace_of, spec, template_of
from kubesched.backend.embedded.controllers.job import is_indexed

API_VERSION: Final = "scheduling.k8s.io/v1alpha2"
SAFE_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
DNS1123_SUBDOMAIN_MAX: Final = 253


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """rand.SafeEncodeString: each byte to a letter or digit that cannot spell a bad word."""
    return "".join(SAFE_ALPHABET[b % len(SAFE_ALPHABET)] for b in text.encode())


def workload_name(job: ObjView) -> str:
    hashed = safe_encode(str(fnv32a(str(meta(job).get("uid") or "").encode())))
    return f"{name_of(job)[: DNS1123_SUBDOMAIN_MAX - len(hashed) - 1]}-{hashed}"


def pod_group_name(workload: str, template: str) -> str:
    """computePodGroupName: both names, cut to fit around the hash of the two."""
    hashed = safe_encode(str(fnv32a((workload + template).encode())))
    room = DNS1123_SUBDOMAIN_MAX - len(hashed) - 2
    if len(workload) + len(template) > room:
        half = room // 2
        if len(workload) <= half:
            template = template[: room - len(workload)]
        elif len(template) <= half:
            workload = workload[: room - len(template)]
        else:
            workload, template = workload[: room - half], template[:half]
    return f"{workload}-{template}-{hashed}"


def gang_candidate(job: ObjView) -> bool:
    """IsGangSchedulingCandidate: Indexed, parallelism > 1 and equal to completions, no group in the template."""
    parallelism, completions = spec(job).get("parallelism"), spec(job).get("completions")
    template_spec = (template_of(job) or {}).get("spec") or {}
    return (
        isinstance(parallelism, int)
        and parallelism > 1
        and is_indexed(job)
        and completions == parallelism
        and template_spec.get("schedulingGroup") is None
    )


def _controller_ref(job: ObjView) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": name_of(job),
        "uid": meta(job).get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def new_workload(job: ObjView) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": {
            "name": workload_name(job),
            "namespace": namespace_of(job),
            "ownerReferences": [_controller_ref(job)],
        },
        "spec": {
            "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": name_of(job)},
            "podGroupTemplates": [
                {"name": f"{name_of(job)}-pgt-0", "schedulingPolicy": {"gang": {"minCount": spec(job)["parallelism"]}}}
            ],
        },
    }


def new_pod_group(job: ObjView, workload: ObjView) -> Obj:
    template = (spec(workload).get("podGroupTemplates") or [{}])[0]
    wl_meta = meta(workload)
    return {
        "apiVersion": API_VERSION,
        "kind": "PodGroup",
        "metadata": {
            "name": pod_group_name(str(wl_meta.get("name")), str(template.get("name"))),
            "namespace": namespace_of(job),
            "ownerReferences": [
                _controller_ref(job),
                {"apiVersion": API_VERSION, "kind": "Workload", "name": wl_meta.get("name"), "uid": wl_meta.get("uid")},
            ],
        },
        "spec": {
            "podGroupTemplateRef": {
                "workload": {"workloadName": wl_meta.get("name"), "podGroupTemplateName": template.get("name")}
            },
            "schedulingPolicy": dict(template.get("schedulingPolicy") or {}),
        },
    }


def _owned_by(obj: ObjView, job: ObjView) -> bool:
    return any(
        ref.get("controller") and ref.get("kind") == "Job" and ref.get("uid") == meta(job).get("uid")
        for ref in meta(obj).get("ownerReferences") or ()
    )


def ensure(
    job: ObjView,
    pods: Sequence[ObjView],
    workloads: Sequence[ObjView],
    get: Callable[[str, str, str], ObjView | None],
    create: Callable[[Obj], ObjView | None],
) -> ObjView | None:
    """ensureWorkloadAndPodGroup: the Job's PodGroup, made (with its Workload) when the Job is new; None when
    the Job is left to plain scheduling. `workloads` are those whose controllerRef names the Job."""
    if not gang_candidate(job):
        return None
    if not workloads:
        status = job.get("status") or {}
        if pods or status.get("startTime") or status.get("succeeded") or status.get("failed"):
            return None
        workload = create(new_workload(job))
    elif len(workloads) == 1 and _owned_by(workloads[0], job):
        workload = workloads[0]
        if len(spec(workload).get("podGroupTemplates") or ()) != 1:
            return None
    else:
        return None
    if workload is None:
        return None
    wanted = new_pod_group(job, workload)
    existing = get("PodGroup", namespace_of(job), name_of(wanted))
    if existing is not None:
        return existing if _owned_by(existing, job) else None
    return create(wanted)


def stamp(plan: Plan, pod_group: ObjView) -> Plan:
    """The pods the plan creates name the PodGroup and list it among their owners (not as controller)."""
    ref = {"apiVersion": API_VERSION, "kind": "PodGroup", "name": name_of(pod_group), "uid": meta(pod_group).get("uid")}
    for pod in plan.create:
        pod.setdefault("spec", {})["schedulingGroup"] = {"podGroupName": name_of(pod_group)}
        owners = pod.setdefault("metadata", {}).setdefault("ownerReferences", [])
        owners.append(dict(ref))
    return plan
