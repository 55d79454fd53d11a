"""The verdicts in tests/hostile_cases.py, and the simulator's field schema, checked against kube-apiserver v1.36.

Each case's object is POSTed with dry run and strict field validation (what
`kubectl apply` does by default); objects in its context are created for real first.
The answer must hold the case's verdict, or be a success where the verdict is None.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.hostile_cases import CASES, Case
from tests.upstream.openapi_schema import compact, fetch

from kubesched.apiserver.openapi_v1_36 import SCHEMA
from kubesched.backend.kube.api import APIError, KubeAPI
from kubesched_testing.controlplane import TOKEN, ControlPlane

PATHS = {
    "Pod": "/api/v1/namespaces/default/pods",
    "Node": "/api/v1/nodes",
    "Namespace": "/api/v1/namespaces",
    "PersistentVolume": "/api/v1/persistentvolumes",
    "PersistentVolumeClaim": "/api/v1/namespaces/default/persistentvolumeclaims",
    "Service": "/api/v1/namespaces/default/services",
    "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
    "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "CSINode": "/apis/storage.k8s.io/v1/csinodes",
    "CSIStorageCapacity": "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities",
    "PodDisruptionBudget": "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "Deployment": "/apis/apps/v1/namespaces/default/deployments",
    "ReplicaSet": "/apis/apps/v1/namespaces/default/replicasets",
    "StatefulSet": "/apis/apps/v1/namespaces/default/statefulsets",
    "DaemonSet": "/apis/apps/v1/namespaces/default/daemonsets",
    "ReplicationController": "/api/v1/namespaces/default/replicationcontrollers",
    "Job": "/apis/batch/v1/namespaces/default/jobs",
    "CronJob": "/apis/batch/v1/namespaces/default/cronjobs",
    "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
    "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
    "ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
    "ResourceClaimTemplate": "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates",
}
pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
ADMISSION_SYNC_S = 10.0  # admission plugins read PriorityClasses through an informer: give it time


def _answer(api: KubeAPI, obj: dict[str, Any]) -> str | None:
    """None when the API server takes the object, else its message."""
    try:
        api.request(
            "POST", PATHS[obj["kind"]], query={"dryRun": "All", "fieldValidation": "Strict"}, body=obj, retries=0
        )
    except APIError as err:
        return err.message
    return None


@pytest.fixture
def context(admin_api: KubeAPI, request: pytest.FixtureRequest) -> Iterator[Case]:
    case: Case = request.param
    made = []
    for obj in case.context:
        admin_api.request("POST", PATHS[obj["kind"]], body=obj)
        made.append(obj)
    yield case
    for obj in made:
        admin_api.request("DELETE", f"{PATHS[obj['kind']]}/{obj['metadata']['name']}")


@pytest.mark.parametrize("context", CASES, ids=[c.id for c in CASES], indirect=True)
def test_verdict_is_the_api_servers(admin_api: KubeAPI, context: Case) -> None:
    case = context
    deadline = time.monotonic() + (ADMISSION_SYNC_S if case.context else 0)
    while True:
        answer = _answer(admin_api, case.obj)
        agrees = answer is None if case.verdict is None else answer is not None and case.verdict in answer
        if agrees or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    assert agrees, f"the API server answered: {answer}"


def test_schema_is_v1_36s(control_plane: ControlPlane) -> None:
    """openapi_v1_36.py is what tests/upstream/openapi_schema.py makes of the served OpenAPI."""
    assert compact(fetch(control_plane.url, TOKEN)) == SCHEMA
