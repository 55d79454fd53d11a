"""Kinds the simulator reads past: what `kubectl get all -o yaml` or `helm template` prints besides workloads.

ConfigMaps, Secrets, Ingresses, RBAC, HorizontalPodAutoscalers, CustomResourceDefinitions
and every custom resource (a kind in an API group the API server does not serve itself)
say nothing a scheduler uses, so they are skipped and counted, not refused. An unknown
kind in a built-in group (`apps/v1 Deploymnet`, `v1 Gizmo`) or without an apiVersion is
still refused: it is most likely a typo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Groups kube-apiserver v1.36 serves itself ("" is the core group).
BUILT_IN_GROUPS = frozenset(
    {
        "",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "extensions",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    }
)
# Built-in kinds no scheduler plugin reads.
UNUSED_KINDS = frozenset(
    {
        "APIService",
        "Binding",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "ClusterTrustBundle",
        "ComponentStatus",
        "ConfigMap",
        "ControllerRevision",
        "CustomResourceDefinition",
        "DeviceTaintRule",
        "Endpoints",
        "EndpointSlice",
        "Event",
        "FlowSchema",
        "HorizontalPodAutoscaler",
        "IPAddress",
        "Ingress",
        "IngressClass",
        "Lease",
        "LeaseCandidate",
        "LimitRange",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
        "MutatingWebhookConfiguration",
        "NetworkPolicy",
        "PodTemplate",
        "PriorityLevelConfiguration",
        "ResourceQuota",
        "Role",
        "RoleBinding",
        "RuntimeClass",
        "Secret",
        "ServiceAccount",
        "ServiceCIDR",
        "StorageVersion",
        "StorageVersionMigration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "VolumeAttachment",
        "VolumeAttributesClass",
    }
)


def unused_kind(obj: Mapping[str, Any]) -> str:
    """How to name the object's kind in the skipped-objects warning, or '' when it must not be skipped."""
    kind = obj.get("kind")
    api = obj.get("apiVersion")
    if not isinstance(kind, str) or not kind or not isinstance(api, str) or not api:
        return ""
    group = api.rpartition("/")[0] if "/" in api else ""
    if group not in BUILT_IN_GROUPS:
        return f"{kind}.{group}"
    return kind if kind in UNUSED_KINDS else ""


def skipped_warning(counts: Mapping[str, int]) -> str:
    """One line for all skipped objects: how many, and of which kinds (most frequent first)."""
    total = sum(counts.values())
    kinds = ", ".join(f"{k} ({n})" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"skipped {total} object(s) of kinds kubesched does not use: {kinds}"
