"""Field types of scheduling.k8s.io/v1alpha2 (Workload, PodGroup), from kube-apiserver v1.36's OpenAPI v3.

Generated like openapi_v1_36.py (tests/upstream/openapi_schema.py), from a server started with
`--runtime-config=scheduling.k8s.io/v1alpha2=true` and the workload gates on; `basic`'s empty struct
written in by hand (the generator gives empty structs no fields). Kept apart because
the group is served only behind those gates (apiserver/workload_api.py decides when it is).
"""

from typing import Any

SCHEMA: dict[str, Any] = {
    "kinds": {
        "Workload": ["scheduling.k8s.io/v1alpha2", "scheduling.v1alpha2.Workload"],
        "PodGroup": ["scheduling.k8s.io/v1alpha2", "scheduling.v1alpha2.PodGroup"],
    },
    "structs": {
        "scheduling.v1alpha2.BasicSchedulingPolicy": {},  # an empty struct: the generator writes "any"
        "scheduling.v1alpha2.GangSchedulingPolicy": {"minCount": "int32"},
        "scheduling.v1alpha2.PodGroup": {
            "apiVersion": "string",
            "kind": "string",
            "metadata": "&meta.v1.ObjectMeta",
            "spec": "&scheduling.v1alpha2.PodGroupSpec",
            "status": "&scheduling.v1alpha2.PodGroupStatus",
        },
        "scheduling.v1alpha2.PodGroupResourceClaim": {
            "name": "string",
            "resourceClaimName": "string",
            "resourceClaimTemplateName": "string",
        },
        "scheduling.v1alpha2.PodGroupResourceClaimStatus": {"name": "string", "resourceClaimName": "string"},
        "scheduling.v1alpha2.PodGroupSchedulingConstraints": {"topology": "[]&scheduling.v1alpha2.TopologyConstraint"},
        "scheduling.v1alpha2.PodGroupSchedulingPolicy": {
            "basic": "&scheduling.v1alpha2.BasicSchedulingPolicy",
            "gang": "&scheduling.v1alpha2.GangSchedulingPolicy",
        },
        "scheduling.v1alpha2.PodGroupSpec": {
            "disruptionMode": "string",
            "podGroupTemplateRef": "&scheduling.v1alpha2.PodGroupTemplateReference",
            "priority": "int32",
            "priorityClassName": "string",
            "resourceClaims": "[]&scheduling.v1alpha2.PodGroupResourceClaim",
            "schedulingConstraints": "&scheduling.v1alpha2.PodGroupSchedulingConstraints",
            "schedulingPolicy": "&scheduling.v1alpha2.PodGroupSchedulingPolicy",
        },
        "scheduling.v1alpha2.PodGroupStatus": {
            "conditions": "[]&meta.v1.Condition",
            "resourceClaimStatuses": "[]&scheduling.v1alpha2.PodGroupResourceClaimStatus",
        },
        "scheduling.v1alpha2.PodGroupTemplate": {
            "disruptionMode": "string",
            "name": "string",
            "priority": "int32",
            "priorityClassName": "string",
            "resourceClaims": "[]&scheduling.v1alpha2.PodGroupResourceClaim",
            "schedulingConstraints": "&scheduling.v1alpha2.PodGroupSchedulingConstraints",
            "schedulingPolicy": "&scheduling.v1alpha2.PodGroupSchedulingPolicy",
        },
        "scheduling.v1alpha2.PodGroupTemplateReference": {
            "workload": "&scheduling.v1alpha2.WorkloadPodGroupTemplateReference"
        },
        "scheduling.v1alpha2.TopologyConstraint": {"key": "string"},
        "scheduling.v1alpha2.TypedLocalObjectReference": {"apiGroup": "string", "kind": "string", "name": "string"},
        "scheduling.v1alpha2.Workload": {
            "apiVersion": "string",
            "kind": "string",
            "metadata": "&meta.v1.ObjectMeta",
            "spec": "&scheduling.v1alpha2.WorkloadSpec",
        },
        "scheduling.v1alpha2.WorkloadPodGroupTemplateReference": {
            "podGroupTemplateName": "string",
            "workloadName": "string",
        },
        "scheduling.v1alpha2.WorkloadSpec": {
            "controllerRef": "&scheduling.v1alpha2.TypedLocalObjectReference",
            "podGroupTemplates": "[]&scheduling.v1alpha2.PodGroupTemplate",
        },
    },
}
