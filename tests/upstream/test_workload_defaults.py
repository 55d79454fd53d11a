"""The defaults kubesched gives workloads are kube-apiserver v1.36's, for every field their controllers read.

Each minimal workload is POSTed with dry run; the fields kubesched fills in (defaulting.py,
and a Job's generated selector and labels) must equal what the API server stored. The
control plane has no controller-manager, so the controllers themselves cannot be run
against it; their sources (pkg/controller) are what backend/embedded/controllers follows.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.apiserver.defaulting import set_defaults
from kubesched.backend.embedded.controllers.create import prepare_for_create
from kubesched.backend.kube.api import KubeAPI

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

TEMPLATE: dict[str, Any] = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
JOB_TEMPLATE = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}
SELECTOR = {"matchLabels": {"app": "x"}}
CASES: list[tuple[str, str, dict[str, Any], list[str]]] = [
    (
        "Deployment",
        "/apis/apps/v1/namespaces/default/deployments",
        {"selector": SELECTOR, "template": TEMPLATE},
        ["spec.replicas", "spec.strategy", "spec.revisionHistoryLimit", "spec.progressDeadlineSeconds"],
    ),
    (
        "Deployment",
        "/apis/apps/v1/namespaces/default/deployments",
        {"selector": SELECTOR, "template": TEMPLATE, "strategy": {"type": "Recreate"}},
        ["spec.strategy"],
    ),
    (
        "StatefulSet",
        "/apis/apps/v1/namespaces/default/statefulsets",
        {"selector": SELECTOR, "template": TEMPLATE},
        [
            "spec.replicas",
            "spec.podManagementPolicy",
            "spec.updateStrategy",
            "spec.persistentVolumeClaimRetentionPolicy",
            "spec.revisionHistoryLimit",
        ],
    ),
    (
        "DaemonSet",
        "/apis/apps/v1/namespaces/default/daemonsets",
        {"selector": SELECTOR, "template": TEMPLATE},
        ["spec.updateStrategy", "spec.revisionHistoryLimit", "metadata.annotations"],
    ),
    (
        "ReplicaSet",
        "/apis/apps/v1/namespaces/default/replicasets",
        {"selector": SELECTOR, "template": TEMPLATE},
        ["spec.replicas"],
    ),
    (
        "ReplicationController",
        "/api/v1/namespaces/default/replicationcontrollers",
        {"template": TEMPLATE},
        ["spec.replicas", "spec.selector", "metadata.labels"],
    ),
    *[
        (
            "Job",
            "/apis/batch/v1/namespaces/default/jobs",
            {"template": JOB_TEMPLATE, **spec},
            [
                "spec.parallelism",
                "spec.completions",
                "spec.backoffLimit",
                "spec.completionMode",
                "spec.suspend",
                "spec.podReplacementPolicy",
                "spec.manualSelector",
                "spec.selector",
                "spec.template.metadata.labels",
                "metadata.labels",
            ],
        )
        for spec in (
            {},
            {"parallelism": 3},
            {"completions": 4},
            {"template": {**JOB_TEMPLATE, "metadata": TEMPLATE["metadata"]}},
        )
    ],
    (
        "CronJob",
        "/apis/batch/v1/namespaces/default/cronjobs",
        {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}},
        ["spec.concurrencyPolicy", "spec.suspend", "spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit"],
    ),
]


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


@pytest.mark.parametrize(("kind", "path", "spec", "fields"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_defaults_are_the_api_servers(
    admin_api: KubeAPI, kind: str, path: str, spec: dict[str, Any], fields: list[str]
) -> None:
    api = {"Job": "batch/v1", "CronJob": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    obj: dict[str, Any] = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": "w", "namespace": "default"},
        "spec": spec,
    }
    stored = admin_api.request("POST", path, query={"dryRun": "All"}, body=copy.deepcopy(obj), retries=0)
    ours = copy.deepcopy(obj)
    ours["metadata"]["uid"] = stored["metadata"]["uid"]
    set_defaults(ours)
    prepare_for_create(ours)
    for field in fields:
        assert _get(ours, field) == _get(stored, field), field
