"""Pod requests as the scheduler computes them (v1.36).

Ported tables: component-helpers resource/helpers_test.go (TestPodResourceRequests,
TestPodLevelResourceRequests, TestIsSupportedPodLevelResource) and the scheduler's
framework/types_test.go (TestPodInfoCalculateResources, TestCalculatePodResourcesWithResize).
Expected lists keep only what framework.Resource tracks (cpu in millicores, the rest in
units), since that is all the scheduler keeps; ExcludeOverhead, which the scheduler never
sets, and the DRANodeAllocatableResources cases (alpha, off) are left out.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    calculate_resource,
    is_supported_pod_level_resource,
    pod_requests,
)

MI = 2**20
GI = 2**30
INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
DEFERRED = [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]
IN_PROGRESS = [{"type": "PodResizeInProgress", "status": "True"}]


def c(name: str = "", sidecar: bool = False, **requests: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "resources": {"requests": {k.replace("_", "-"): v for k, v in requests.items()}},
    }
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


def cs(name: str, allocated: dict[str, str] | None = None, **requests: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "resources": {"requests": {k.replace("_", "-"): v for k, v in requests.items()}},
    }
    if allocated is not None:
        out["allocatedResources"] = allocated
    return out


def pod(
    containers: list[Any] = (),  # type: ignore[assignment]
    init: list[Any] = (),  # type: ignore[assignment]
    overhead: dict[str, str] | None = None,
    pod_level: dict[str, str] | None = None,
    **status: Any,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": list(containers), "initContainers": list(init)}
    if overhead:
        spec["overhead"] = overhead
    if pod_level is not None:
        spec["resources"] = {"requests": pod_level}
    return {"spec": spec, "status": status}


@pytest.mark.parametrize(
    ("obj", "use_status", "expected"),
    [
        pytest.param(pod([c(cpu="1")], [c(cpu="4")]), False, {"cpu": 4000}, id="nil options, larger init container"),
        pytest.param(
            pod([c(cpu="2"), c(cpu="3")], [c(cpu="2")]), False, {"cpu": 5000}, id="nil options, larger containers"
        ),
        pytest.param(
            pod([c(cpu="2"), c(cpu="3")], [c(cpu="2")], overhead={"cpu": "1", "memory": "1Gi"}),
            False,
            {"cpu": 6000, "memory": GI},
            id="pod overhead included",
        ),
        pytest.param(
            pod([c("container-1", cpu="4")], conditions=INFEASIBLE, containerStatuses=[cs("container-1", cpu="2")]),
            True,
            {"cpu": 2000},
            id="resized, infeasible",
        ),
        pytest.param(
            pod(
                [c("container-1", cpu="6")],
                conditions=INFEASIBLE,
                containerStatuses=[cs("container-1", {"cpu": "4"}, cpu="2")],
            ),
            True,
            {"cpu": 4000},
            id="resized, infeasible & in-progress",
        ),
        pytest.param(
            pod([c("container-1", cpu="4")], containerStatuses=[cs("container-1", cpu="2")]),
            True,
            {"cpu": 4000},
            id="resized, no resize status",
        ),
        pytest.param(
            pod(
                [c("container-1", cpu="30m", memory="20M", ephemeral_storage="10G")],
                containerStatuses=[
                    cs(
                        "container-1",
                        {"cpu": "20m", "memory": "10M", "ephemeral-storage": "30G"},
                        cpu="10m",
                        memory="30M",
                        ephemeral_storage="20G",
                    )
                ],
            ),
            True,
            {"cpu": 30, "memory": 30 * 10**6, "ephemeral-storage": 30 * 10**9},
            id="resized: per-resource 3-way maximum",
        ),
        pytest.param(
            pod([c("container-1", cpu="4")], conditions=INFEASIBLE, containerStatuses=[cs("container-1", cpu="2")]),
            False,
            {"cpu": 4000},
            id="resized, infeasible, but don't use status",
        ),
        pytest.param(
            pod(
                init=[c("restartable-init-1", True, cpu="4")],
                conditions=INFEASIBLE,
                initContainerStatuses=[cs("restartable-init-1", cpu="2")],
            ),
            True,
            {"cpu": 2000},
            id="resized, restartable init container, infeasible",
        ),
        pytest.param(
            pod(
                init=[c("restartable-init-1", True, cpu="4")], initContainerStatuses=[cs("restartable-init-1", cpu="2")]
            ),
            True,
            {"cpu": 4000},
            id="resized, restartable init container, no resize status",
        ),
        pytest.param(
            pod(
                init=[c("restartable-init-1", True, cpu="4")],
                conditions=INFEASIBLE,
                initContainerStatuses=[cs("restartable-init-1", cpu="2")],
            ),
            False,
            {"cpu": 4000},
            id="resized, restartable init container, infeasible, but don't use status",
        ),
        pytest.param(
            pod([c("container-1", cpu="1")], [c("restartable-init-1", True, cpu="1")]),
            False,
            {"cpu": 2000},
            id="restartable init container",
        ),
        pytest.param(
            pod(
                [c("container-1", cpu="1")],
                [
                    c("init-1", cpu="5"),
                    c("restartable-init-1", True, cpu="1"),
                    c("restartable-init-2", True, cpu="2"),
                    c("restartable-init-3", True, cpu="3"),
                ],
            ),
            False,
            {"cpu": 7000},
            id="multiple restartable init containers",
        ),
        pytest.param(
            pod(
                [c("container-1", cpu="1")],
                [
                    c("init-1", cpu="5"),
                    c("restartable-init-1", True, cpu="1"),
                    c("restartable-init-2", True, cpu="2"),
                    c("init-2", cpu="5"),
                    c("restartable-init-3", True, cpu="3"),
                ],
            ),
            False,
            {"cpu": 8000},
            id="multiple restartable and regular init containers",
        ),
        pytest.param(
            pod([c("container-1", cpu="100")], [c("restartable-init-1", True, cpu="10"), c("init-1", cpu="200")]),
            False,
            {"cpu": 210000},
            id="restartable-init, init and regular",
        ),
    ],
)
def test_pod_resource_requests(obj: dict[str, Any], use_status: bool, expected: dict[str, int]) -> None:
    assert pod_requests(obj, use_status_resources=use_status) == expected


@pytest.mark.parametrize(
    ("obj", "skip", "expected"),
    [
        pytest.param(pod(), False, {}, id="nil"),
        pytest.param(
            pod(pod_level={"memory": "2Mi"}), True, {}, id="pod level memory resource with SkipPodLevelResources true"
        ),
        pytest.param(
            pod(pod_level={"memory": "2Mi"}),
            False,
            {"memory": 2 * MI},
            id="pod level memory resource with SkipPodLevelResources false",
        ),
        pytest.param(
            pod([c(cpu="2m")], pod_level={"memory": "2Mi"}),
            False,
            {"memory": 2 * MI, "cpu": 2},
            id="pod level memory and container level cpu resources with SkipPodLevelResources false",
        ),
        pytest.param(
            pod([c(storage="3Mi")], pod_level={"storage": "2Mi"}),
            False,
            {},  # upstream: storage 3Mi, which framework.Resource does not track
            id=(
                "pod level unsupported resources set at both pod-level and container-level"
                " with SkipPodLevelResources false"
            ),
        ),
        pytest.param(
            pod([c(memory="3Mi")], pod_level={"storage": "2Mi"}),
            False,
            {"memory": 3 * MI},
            id="pod level unsupported resources set at pod-level with SkipPodLevelResources false",
        ),
        pytest.param(
            pod([c(memory="3Mi", cpu="2m")]),
            False,
            {"memory": 3 * MI, "cpu": 2},
            id="only container level resources set with SkipPodLevelResources false",
        ),
        pytest.param(
            pod([c(memory="3Mi", cpu="2m")], pod_level={"memory": "6Mi", "cpu": "8m"}),
            False,
            {"memory": 6 * MI, "cpu": 8},
            id="both container-level and pod-level resources set with SkipPodLevelResources false",
        ),
        pytest.param(
            pod([c(memory="3Mi", cpu="2m")], [c(memory="5Mi", cpu="4m")]),
            False,
            {"memory": 5 * MI, "cpu": 4},
            id="container-level resources and init container set with SkipPodLevelResources false",
        ),
        pytest.param(
            pod([c(memory="3Mi", cpu="2m")], [c(memory="5Mi", cpu="4m")]),
            True,
            {"memory": 5 * MI, "cpu": 4},
            id="container-level resources and init container set with SkipPodLevelResources true",
        ),
        pytest.param(
            pod([c(memory="3Mi", cpu="2m")], [c(sidecar=True, memory="5Mi", cpu="4m")]),
            False,
            {"memory": 8 * MI, "cpu": 6},
            id="container-level resources and sidecar container set with SkipPodLevelResources false",
        ),
        pytest.param(
            pod([c(memory="3Mi", cpu="2m")], [c(sidecar=True, memory="5Mi", cpu="4m"), c(memory="6Mi", cpu="8m")]),
            False,
            {"memory": 11 * MI, "cpu": 12},
            id="container-level resources, init and sidecar container set with SkipPodLevelResources false",
        ),
        pytest.param(
            pod(
                [c(memory="3Mi", cpu="2m")],
                [c(sidecar=True, memory="5Mi", cpu="4m"), c(memory="6Mi", cpu="8m")],
                pod_level={"memory": "15Mi", "cpu": "18m"},
            ),
            False,
            {"memory": 15 * MI, "cpu": 18},
            id=(
                "pod-level resources, container-level resources, init and sidecar container set"
                " with SkipPodLevelResources false"
            ),
        ),
        pytest.param(
            pod(pod_level={"memory": "10Mi", "hugepages-2Mi": "2Mi"}),
            False,
            {"memory": 10 * MI, "hugepages-2Mi": 2 * MI},
            id="pod-level resources, hugepage request/limit single page size",
        ),
        pytest.param(
            pod(pod_level={"cpu": "1", "hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"}),
            False,
            {"cpu": 1000, "hugepages-2Mi": 2 * MI, "hugepages-1Gi": GI},
            id="pod-level resources, hugepage request/limit multiple page sizes",
        ),
        pytest.param(
            pod([c(hugepages_2Mi="6Mi")], pod_level={"cpu": "1", "hugepages-2Mi": "10Mi"}),
            False,
            {"cpu": 1000, "hugepages-2Mi": 10 * MI},
            id="pod-level resources, container-level resources, hugepage request/limit single page size",
        ),
        pytest.param(
            pod(
                [c(cpu="1", hugepages_1Gi="2Gi")],
                pod_level={"cpu": "1", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"},
            ),
            False,
            {"cpu": 1000, "hugepages-2Mi": 10 * MI, "hugepages-1Gi": 2 * GI},
            id="pod-level resources, container-level resources, hugepage request/limit multiple page sizes",
        ),
        pytest.param(
            pod([c(memory="4Mi", hugepages_1Gi="1Gi")], pod_level={"cpu": "1", "hugepages-2Mi": "10Mi"}),
            False,
            {"cpu": 1000, "memory": 4 * MI, "hugepages-2Mi": 10 * MI, "hugepages-1Gi": GI},
            id=(
                "pod-level resources, container-level resources, hugepage request/limit multiple page sizes"
                " between pod-level and container-level"
            ),
        ),
    ],
)
def test_pod_level_resource_requests(obj: dict[str, Any], skip: bool, expected: dict[str, int]) -> None:
    assert pod_requests(obj, skip_pod_level_resources=skip) == expected


@pytest.mark.parametrize(
    ("name", "want"),
    [("cpu", True), ("memory", True), ("ephemeral-storage", False), ("hugepages-2Mi", True), ("hugepages-1Gi", True)],
)
def test_is_supported_pod_level_resource(name: str, want: bool) -> None:
    assert is_supported_pod_level_resource(name) == want


NZ_CPU, NZ_MEM = DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(pod([{}]), ({}, NZ_CPU, NZ_MEM), id="requestless container"),
        pytest.param(
            pod([c(cpu="500m", memory="500Mi")]),
            ({"cpu": 500, "memory": 500 * MI}, 500, 500 * MI),
            id="1X container with requests",
        ),
        pytest.param(
            pod([c(cpu="500m", memory="500Mi"), c(cpu="700m", memory="800Mi")]),
            ({"cpu": 1200, "memory": 1300 * MI}, 1200, 1300 * MI),
            id="2X container with requests",
        ),
        pytest.param(
            pod(
                [c(cpu="500m", memory="500Mi")],
                [c(cpu="500m", memory="500Mi")],
                pod_level={"cpu": "1200m", "memory": "1200Mi"},
            ),
            ({"cpu": 1200, "memory": 1200 * MI}, 1200, 1200 * MI),
            id="1X container and 1X init container with pod-level requests",
        ),
        pytest.param(
            pod(
                [c(cpu="500m", memory="500Mi")],
                [c(sidecar=True, cpu="500m", memory="500Mi")],
                pod_level={"cpu": "1200m", "memory": "1200Mi"},
            ),
            ({"cpu": 1200, "memory": 1200 * MI}, 1200, 1200 * MI),
            id="1X container and 1X sidecar container with pod-level requests",
        ),
        pytest.param(
            pod([{}], [{}], pod_level={"memory": "1200Mi"}),
            ({"memory": 1200 * MI}, NZ_CPU, 1200 * MI),
            id="1X container with pod-level memory requests",
        ),
        pytest.param(
            pod([{}], [{}], pod_level={"cpu": "500m"}),
            ({"cpu": 500}, 500, NZ_MEM),
            id="1X container with pod-level cpu requests",
        ),
        pytest.param(
            pod([c(ephemeral_storage="800Mi")], [c(ephemeral_storage="500Mi")], pod_level={"cpu": "500m"}),
            ({"cpu": 500, "ephemeral-storage": 800 * MI}, 500, NZ_MEM),
            id="1X container unsupported resources and pod-level supported resources",
        ),
        pytest.param(
            pod(
                [c("c1", cpu="500m", memory="500Mi")],
                nodeAllocatableResourceClaimStatuses=[
                    {"resourceClaimName": "claim", "resources": {"cpu": "100m", "memory": "200Mi"}}
                ],
            ),
            ({"cpu": 500, "memory": 500 * MI}, 500, 500 * MI),
            id="DRA gate disabled, with node allocatable resource claim",
        ),
        pytest.param(
            pod([c(cpu="500m"), c()], pod_level={"memory": "1Gi"}),
            ({"cpu": 500, "memory": GI}, 500, GI),
            id="kubesched: under pod-level requests a cpu any container asks keeps the default out",
        ),
    ],
)
def test_pod_info_calculate_resources(obj: dict[str, Any], expected: tuple[dict[str, int], int, int]) -> None:
    assert calculate_resource(obj) == expected


def resize_pod(
    requests: dict[str, str],
    status_resources: dict[str, str],
    *,
    pod_level: dict[str, str] | None = None,
    pod_level_status: dict[str, str] | None = None,
    init: tuple[dict[str, str], dict[str, str]] | None = None,
    sidecar: tuple[dict[str, str], dict[str, str]] | None = None,
    conditions: list[Any] | None = None,
) -> dict[str, Any]:
    """TestCalculatePodResourcesWithResize's preparePodInfo."""
    obj = pod([c("c1", False, **requests)], pod_level=pod_level, phase="Running")
    status = obj["status"]
    status["containerStatuses"] = [cs("c1", None, **status_resources)]
    if pod_level_status is not None:
        status["resources"] = {"requests": pod_level_status}
    for name, pair, is_sidecar in (("i1", init, False), ("s1", sidecar, True)):
        if pair is not None:
            obj["spec"]["initContainers"].append(c(name, is_sidecar, **pair[0]))
            status.setdefault("initContainerStatuses", []).append(cs(name, None, **pair[1]))
    if conditions:
        status["conditions"] = conditions
    return obj


R500 = {"cpu": "500m", "memory": "500Mi"}
R700 = {"cpu": "700m", "memory": "800Mi"}


@pytest.mark.parametrize(
    ("obj", "cpu", "mem"),
    [
        pytest.param(resize_pod(R500, R500), 500, 500 * MI, id="Pod with no pending resize"),
        pytest.param(
            resize_pod(
                R500,
                {"cpu": "700m", "memory": "500Mi"},
                pod_level={"cpu": "700m", "memory": "500Mi"},
                pod_level_status=R500,
            ),
            700,
            500 * MI,
            id="Pod with pod-level resources no pending resize",
        ),
        pytest.param(resize_pod(R500, R500, conditions=IN_PROGRESS), 500, 500 * MI, id="Pod with resize in progress"),
        pytest.param(
            resize_pod(
                R500,
                {"cpu": "700m", "memory": "500Mi"},
                pod_level={"cpu": "700m", "memory": "500Mi"},
                pod_level_status=R500,
                conditions=IN_PROGRESS,
            ),
            700,
            500 * MI,
            id="Pod with pod-level resources and resize in progress",
        ),
        pytest.param(resize_pod(R700, R500, conditions=DEFERRED), 700, 800 * MI, id="Pod with deferred resize"),
        pytest.param(
            resize_pod(R500, R500, pod_level=R700, pod_level_status=R500, conditions=DEFERRED),
            700,
            800 * MI,
            id="Pod with pod-level resources and with deferred resize",
        ),
        pytest.param(resize_pod(R700, R500, conditions=INFEASIBLE), 500, 500 * MI, id="Pod with infeasible resize"),
        pytest.param(
            resize_pod(R500, R500, init=(R700, R700)), 700, 800 * MI, id="Pod with init container and no pending resize"
        ),
        pytest.param(
            resize_pod(R500, R500, init=(R700, R700), sidecar=(R700, R700)),
            1200,
            1300 * MI,
            id="Pod with sider container and no pending resize",
        ),
    ],
)
def test_calculate_pod_resources_with_resize(obj: dict[str, Any], cpu: int, mem: int) -> None:
    assert calculate_resource(obj) == ({"cpu": cpu, "memory": mem}, cpu, mem)


def test_quantities_sum_exactly_before_rounding_up() -> None:
    """resource.Quantity adds exactly and rounds once: two 0.5-byte requests make 1 byte, not 2."""
    assert pod_requests(pod([c(memory="0.5"), c(memory="0.5"), c(cpu="0.5m"), c(cpu="0.5m")])) == {
        "memory": 1,
        "cpu": 1,
    }
