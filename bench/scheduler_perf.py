"""Replay upstream scheduler_perf workloads in-process and as the whole `kubesched simulate` command.

    python3 bench/scheduler_perf.py all                      # every workload upstream gives a threshold
    python3 bench/scheduler_perf.py Affinity --mode inprocess  # names containing "Affinity"
    python3 bench/scheduler_perf.py --list

The workloads are the 31 non-exotic entries of upstream's scheduler_perf that carry a throughput
threshold (../shared/reference/scheduler-perf/workloads.yaml), under the same names, with objects
following upstream's templates, then the DRA workloads of v1.36's scheduler_perf (DRA_SPECS; those
left out and why: DRA_SKIPPED, `--list`). Setup ops (nodes, namespaces, DRA drivers' slices, device
classes, claims allocated up front, init pods) run untimed; the measured pods are then scheduled
while the timer runs.

Steady state (createPods with steadyState, the SteadyState* DRA workloads): N pods; once all N are
bound they are deleted (their claims released and deleted by the resourceclaim controller) and N
new ones created, until the workload's seconds are up; pods/s = pods bound / seconds, as upstream's
throughput collector counts every pod that got a node in the namespace.

In-process: the scheduler on the embedded cluster in this process, one scheduling cycle at a time.
Churn and timed deletions fire on the virtual clock, which during the measurement follows the wall
clock (a churn every 200 ms of real time, as upstream); when the scheduler has nothing to do, the
clock jumps to the next timer instead of sleeping. pods/s = measured pods bound / wall seconds.
A steady-state run lasts its seconds of wall time, stopping mid-batch as upstream does (and, as upstream
requires, once at least one pod is bound).

Command: `python -m kubesched simulate --output json --record none` in a child process, twice: on
the setup manifests (nodes, namespaces, init pods already bound where the in-process setup put
them), then on setup + measured pods (+ a Scenario with the churn). pods/s = measured pods /
(full run's wall seconds - setup run's): the marginal rate, which leaves out loading the setup.
Peak RSS and CPU seconds are the child's (os.wait4). Scheduling takes no virtual time there, so the
churn steps (as many as upstream would see at its threshold rate) play after the measured pods; a
steady state is Scenario steps a virtual second apart, each deleting a batch and creating the next
(as many batches as upstream would schedule in its seconds at its threshold rate, at least two).

With several workloads selected, each runs in its own child process so that peak RSS is its own.
Run by hand, not in CI.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import json
import math
import os
import random
import resource
import signal
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from kubesched.api.object import Obj  # noqa: E402
from kubesched.backend.embedded.cluster import EmbeddedCluster  # noqa: E402
from kubesched.backend.embedded.controllers.controller_utils import NameGenerator  # noqa: E402
from kubesched.backend.embedded.controllers.resource_claim import ResourceClaimController  # noqa: E402
from kubesched.clock import VirtualClock  # noqa: E402
from kubesched.config.load import load_config  # noqa: E402
from kubesched.dra.allocator import AllocatedState, Allocator  # noqa: E402
from kubesched.framework.outcome import Outcome, SchedulerEvent  # noqa: E402
from kubesched.framework.plugins.dynamicresources.dra_manager import CachedSelectors  # noqa: E402
from kubesched.scheduler import Scheduler  # noqa: E402
from kubesched.simulator.run import embedded_scheduler  # noqa: E402

PAUSE = "registry.k8s.io/pause:3.10.1"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
SMALL = {"cpu": "100m", "memory": "500Mi"}
TEAM = {"team": "devops"}  # templates/namespace-with-labels.yaml
Maker = Callable[[str, int], Obj]  # (namespace, index) -> object


# ---------------------------------------------------------------- pod templates (templates/*.yaml)


def _pod(
    name: str,
    namespace: str,
    labels: dict[str, str] | None = None,
    requests: dict[str, str] | None = None,
    limits: bool = True,
    finalizers: tuple[str, ...] = (),
    **spec: Any,
) -> Obj:
    """One pause container; `requests` (with limits equal to them unless `limits` is off) and port 80 if given."""
    container: Obj = {"name": "pause", "image": PAUSE}
    if requests is not None:
        container["ports"] = [{"containerPort": 80}]
        container["resources"] = {"requests": requests, **({"limits": requests} if limits else {})}
    meta: Obj = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {**spec, "containers": [container]}}


def _inter_pod(kind: str, preferred: bool, color: str, key: str, ns_selector: bool) -> Obj:
    """An inter-pod (anti-)affinity on color=<color> pods: over sched-0/1, or namespaces labelled team=devops."""
    term: Obj = {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key}
    if ns_selector:
        term["namespaceSelector"] = {"matchLabels": TEAM}
    else:
        term["namespaces"] = ["sched-1", "sched-0"]
    if preferred:
        return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [{"podAffinityTerm": term, "weight": 1}]}}
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


# template -> (generateName, color label, affinity kind, preferred, topology key, namespaceSelector)
_AFFINITY_TEMPLATES: dict[str, tuple[str, str, str, bool, str, bool]] = {
    "pod-with-pod-affinity": ("affinity-pod-", "blue", "podAffinity", False, ZONE, False),
    "pod-with-pod-anti-affinity": ("anti-affinity-pod-", "green", "podAntiAffinity", False, HOSTNAME, False),
    "pod-with-preferred-pod-affinity": ("preferred-affinity-pod-", "red", "podAffinity", True, HOSTNAME, False),
    "pod-with-preferred-pod-anti-affinity": (
        "preferred-anti-affinity-pod-",
        "yellow",
        "podAntiAffinity",
        True,
        HOSTNAME,
        False,
    ),
    "pod-affinity-ns-selector": ("affinity-pod-", "blue", "podAffinity", False, ZONE, True),
    "pod-anti-affinity-ns-selector": ("anti-affinity-pod-", "green", "podAntiAffinity", False, HOSTNAME, True),
    "pod-preferred-affinity-ns-selector": ("preferred-affinity-pod-", "red", "podAffinity", True, HOSTNAME, True),
    "pod-preferred-anti-affinity-ns-selector": ("anti-affinity-pod-", "green", "podAntiAffinity", True, HOSTNAME, True),
}


def _affinity_maker(template: str) -> Maker:
    prefix, color, kind, preferred, key, ns_selector = _AFFINITY_TEMPLATES[template]
    affinity = _inter_pod(kind, preferred, color, key, ns_selector)
    return lambda ns, i: _pod(f"{prefix}{i}", ns, {"color": color}, SMALL, affinity=affinity)


def _spread(when: str, **policies: str) -> Obj:
    """templates/pod-with-(preferred-)topology-spreading.yaml: color=blue pods, maxSkew 5 over zones."""
    return {
        "maxSkew": 5,
        "topologyKey": ZONE,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"color": "blue"}},
        **policies,
    }


def _pinned(values: list[str], key: str = "metadata.name", fields: bool = True) -> Obj:
    """A required node affinity: one term, `key` In `values` (matchFields or matchExpressions)."""
    term = {("matchFields" if fields else "matchExpressions"): [{"key": key, "operator": "In", "values": values}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


# pod-with-node-inclusion-policy.yaml spells NodeAffinityPolicy/NodeTaintsPolicy with a capital N;
# upstream decodes case-insensitively, so they are the lower-case fields, both Honor.
_INCLUSION = {
    "maxSkew": 1,
    "topologyKey": HOSTNAME,
    "whenUnsatisfiable": "DoNotSchedule",
    "nodeAffinityPolicy": "Honor",
    "nodeTaintsPolicy": "Honor",
    "labelSelector": {"matchLabels": {"foo": "bar"}},
}
_APP = {"app": "scheduler-perf"}

# ---------------------------------------------------------------- DRA templates (dra/templates/*.yaml, dra.go)

DRIVER = "test-driver.cdi.k8s.io"
RESOURCE_API = "resource.k8s.io/v1"  # some upstream templates say v1beta2: the same shape, served as v1
DRA_NODES = {  # the ResourceSlices that are not per node select the DRA nodes by their label
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "node-with-dra", "operator": "In", "values": ["true"]}]}]
}


def driver_slice(node: str, devices: int) -> Obj:
    """createResourceDriver's slice for one node (dra.go resourceSlice): a pool named after the node with
    `maxClaimsPerNode` devices instance-0.., each an A100 GPU of 1Gi with its index as NUMA node."""
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": node},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"instance-{i}",
                    "attributes": {
                        "model": {"string": "A100"},
                        "family": {"string": "GPU"},
                        "driverVersion": {"version": "1.2.3"},
                        "dra.example.com/numa": {"int": i},
                    },
                    "capacity": {"memory": {"value": "1Gi"}},
                }
                for i in range(devices)
            ],
        },
    }


def _device_class(name: str, expression: str = f'device.driver == "{DRIVER}"', extended: str = "") -> Obj:
    spec: Obj = {"selectors": [{"cel": {"expression": expression}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"apiVersion": RESOURCE_API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def _exactly(name: str = "req-0", cls: str = "test-class", **more: Any) -> Obj:
    return {"name": name, "exactly": {"deviceClassName": cls, **more}}


def _claim_spec(*requests: Obj, constraints: tuple[Obj, ...] = ()) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = list(constraints)
    return {"devices": devices}


def _claim_template(namespace: str, spec: Obj, name: str = "test-claim-template") -> Obj:
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": spec},
    }


def _claim(name: str, namespace: str, spec: Obj) -> Obj:
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _shared_slice(name: str, pool: str, count: int, **spec: Any) -> Obj:
    """A slice of `pool` (made of `count` slices) for every DRA node, by node selector."""
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
            "driver": DRIVER,
            "nodeSelector": DRA_NODES,
            **spec,
        },
    }


def _counters(names: str, value: str = "1") -> Obj:
    return {n: {"value": value} for n in names.split()}


def _consumes(*sets: tuple[str, Obj]) -> list[Obj]:
    return [{"counterSet": s, "counters": c} for s, c in sets]


def _partitionable_devices(i: int) -> Obj:
    """resourceslice-partitionable-devices.yaml: two devices of two counters each (the first preallocated by the
    init claims), four of one, all over one counter set of counter1-4; attribute dra.example.com/slice: i."""

    def device(name: str, preallocate: bool, counters: str) -> Obj:
        return {
            "name": name,
            "attributes": {"preallocate": {"bool": preallocate}, "dra.example.com/slice": {"int": i}},
            "capacity": {"counters": {"value": str(len(counters.split()))}},
            "consumesCounters": _consumes(("counter-set", _counters(counters))),
        }

    devices = [
        device("device-2-counters-1", True, "counter1 counter2"),
        device("device-2-counters-2", False, "counter3 counter4"),
    ]
    devices += [device(f"device-1-counter-{k}", False, f"counter{k}") for k in range(1, 5)]
    return _shared_slice(f"resourceslice-devices-{i}", f"resourceslice-{i}", 2, devices=devices)


def _backtracking_devices(i: int) -> Obj:
    """resourceslice-partitionable-backtracking-devices.yaml: device-1..8, each one cpu counter, 20Gi (device-1)
    or 10Gi of a 70Gi memory counter: seven devices fit only without device-1."""
    devices = [
        {
            "name": f"device-{k}",
            "consumesCounters": _consumes(
                ("counter-set-for-cpu", _counters(f"cpu{k}")),
                ("counter-set-for-mem", {"mem": {"value": "20Gi" if k == 1 else "10Gi"}}),
            ),
        }
        for k in range(1, 9)
    ]
    return _shared_slice(f"resourceslice-devices-{i}", f"resourceslice-{i}", 2, devices=devices)


_TWO_FROM_ONE_SLICE = _claim_spec(
    _exactly(count=2), constraints=({"requests": ["req-0"], "matchAttribute": "dra.example.com/slice"},)
)
_FORTY_GI: Obj = {"capacity": {"requests": {"memory": "40Gi"}}}

DRA_TEMPLATES: dict[str, Maker] = {
    "dra/deviceclass": lambda ns, i: _device_class("test-class"),
    "dra/deviceclass-no-devices": lambda ns, i: _device_class(
        "no-devices-class", 'device.driver == "no-such-driver.cdi.k8s.io"'
    ),
    "dra/deviceclass-consumablecapacity": lambda ns, i: _device_class(
        "test-class", f'device.driver == "{DRIVER}" &&\ndevice.allowMultipleAllocations == true'
    ),
    "dra/deviceclass-extended-resource": lambda ns, i: _device_class(
        f"test-class-{i}", extended=f"example.com/gpu-{i}"
    ),
    "dra/deviceclass-implicit-extended-resource": lambda ns, i: _device_class(f"test-class-{i}"),
    "dra/deviceclass-extended-resource-scoring": lambda ns, i: _device_class(
        f"scoring-test-class-{i}", extended="example.com/gpu"
    ),
    "dra/resourceclaimtemplate": lambda ns, i: _claim_template(ns, _claim_spec(_exactly())),
    "dra/resourceclaimtemplate-for-two-devices": lambda ns, i: _claim_template(ns, _TWO_FROM_ONE_SLICE),
    "dra/resourceclaimtemplate-consumablecapacity": lambda ns, i: _claim_template(
        ns, _claim_spec(_exactly(**_FORTY_GI), _exactly("req-1", **_FORTY_GI))
    ),
    "dra/resourceclaimtemplate-first-available": lambda ns, i: _claim_template(
        ns,
        _claim_spec(
            {
                "name": "req-0",
                "firstAvailable": [
                    {"name": "sub-0", "deviceClassName": "no-devices-class"},
                    {"name": "sub-1", "deviceClassName": "test-class"},
                ],
            }
        ),
    ),
    "dra/resourceclaimtemplate-backtracking": lambda ns, i: _claim_template(ns, _claim_spec(_exactly(count=7))),
    "dra/resourceclaim": lambda ns, i: _claim(f"test-claim-{i}", ns, _claim_spec(_exactly())),
    "dra/resourceclaim-with-selector": lambda ns, i: _claim(
        f"test-claim-with-selector-{i}",
        ns,
        _claim_spec(
            _exactly(
                selectors=[
                    {
                        "cel": {
                            "expression": f"device.capacity['{DRIVER}'].counters.compareTo(quantity('2')) >= 0 &&\n"
                            f"device.attributes['{DRIVER}'].preallocate"
                        }
                    }
                ]
            )
        ),
    ),
    "dra/resourceslice-partitionable-countersets": lambda ns, i: _shared_slice(
        f"resourceslice-countersets-{i}",
        f"resourceslice-{i}",
        2,
        sharedCounters=[{"name": "counter-set", "counters": _counters("counter1 counter2 counter3 counter4")}],
    ),
    "dra/resourceslice-partitionable-devices": lambda ns, i: _partitionable_devices(i),
    "dra/resourceslice-partitionable-backtracking-countersets": lambda ns, i: _shared_slice(
        f"resourceslice-countersets-{i}",
        f"resourceslice-{i}",
        2,
        sharedCounters=[
            {"name": "counter-set-for-cpu", "counters": _counters(" ".join(f"cpu{k}" for k in range(1, 9)))},
            {"name": "counter-set-for-mem", "counters": {"mem": {"value": "70Gi"}}},
        ],
    ),
    "dra/resourceslice-partitionable-backtracking-devices": lambda ns, i: _backtracking_devices(i),
    "dra/resourceslice-consumablecapacity": lambda ns, i: _shared_slice(
        f"resourceslice-{i}",
        f"resourceslice-{i}",
        1,
        devices=[
            {
                "name": "shareable-device",
                "allowMultipleAllocations": True,
                "capacity": {
                    "memory": {"value": "80Gi", "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi"}}}
                },
            }
        ],
    ),
}


def _claims_pod(name: str, namespace: str, entry: Obj) -> Obj:
    """A pause pod whose container uses the pod's one claim entry, `resource`."""
    pod = _pod(name, namespace, resourceClaims=[{"name": "resource", **entry}])
    pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "resource"}]}
    return pod


def _extended_pod(name: str, namespace: str, resource: str) -> Obj:
    """One of the resource, as request and limit, and nothing else."""
    pod = _pod(name, namespace)
    pod["spec"]["containers"][0]["resources"] = {"requests": {resource: "1"}, "limits": {resource: "1"}}
    return pod


DRA_POD_TEMPLATES: dict[str, Maker] = {
    # generateName test-dra: the index stands in for the API server's random suffix
    "dra/pod-with-claim-template": lambda ns, i: _claims_pod(
        f"test-dra-{i}", ns, {"resourceClaimTemplateName": "test-claim-template"}
    ),
    # five pods share a claim
    "dra/pod-with-claim-ref": lambda ns, i: _claims_pod(
        f"test-dra-{i}", ns, {"resourceClaimName": f"test-claim-{i // 5}"}
    ),
    "dra/pod-with-extended-resource": lambda ns, i: _extended_pod(f"test-dra-{i}", ns, f"example.com/gpu-{i}"),
    "dra/pod-with-extended-resource-mod25": lambda ns, i: _extended_pod(
        f"test-dra-{i}", ns, f"example.com/gpu-{i % 25}"
    ),
    "dra/pod-with-extended-resource-mod50": lambda ns, i: _extended_pod(
        f"test-dra-{i}", ns, f"example.com/gpu-{i % 50}"
    ),
    "dra/pod-with-implicit-extended-resource-mod25": lambda ns, i: _extended_pod(
        f"test-dra-{i}", ns, f"deviceclass.resource.kubernetes.io/test-class-{i % 25}"
    ),
    "dra/pod-with-extended-resource-scoring": lambda ns, i: _extended_pod(
        f"scoring-test-pod-{i}", ns, "example.com/gpu"
    ),
}


# ---------------------------------------------------------------- every pod template by name

POD_TEMPLATES: dict[str, Maker] = {
    "pod-default": lambda ns, i: _pod(f"pod-{i}", ns, requests=SMALL),
    "pod-low-priority": lambda ns, i: _pod(f"pod-{i}", ns, requests={"cpu": "900m", "memory": "500Mi"}),
    "pod-high-priority": lambda ns, i: _pod(
        f"pod-high-priority-{i}", ns, requests={"cpu": "3000m", "memory": "500Mi"}, priority=10
    ),
    "pod-high-priority-large-cpu": lambda ns, i: _pod(
        f"pod-h-{i}", ns, requests={"cpu": "9", "memory": "500Mi"}, limits=False, priority=10
    ),
    "light-pod": lambda ns, i: _pod(f"light-pod-{i}", ns, terminationGracePeriodSeconds=0),
    "gated-pod": lambda ns, i: _pod(f"gated-pod-{i}", ns, schedulingGates=[{"name": "test.k8s.io/hold"}]),
    "daemonset-pod": lambda ns, i: _pod(f"daemonset-{i}", ns, affinity=_pinned(["scheduler-perf-node"])),
    "pod-with-secret-volume": lambda ns, i: _pod(
        f"secret-volume-{i}", ns, requests=SMALL, volumes=[{"name": "secret", "secret": {"secretName": "secret"}}]
    ),
    "pod-with-pod-anti-affinity-label": lambda ns, i: _pod(
        f"anti-affinity-matching-pod-{i}", ns, {"color": "green"}, SMALL
    ),
    "pod-with-node-affinity": lambda ns, i: _pod(
        f"node-affinity-{i}", ns, requests=SMALL, affinity=_pinned(["zone1", "zone2"], ZONE, fields=False)
    ),
    "pod-with-topology-spreading": lambda ns, i: _pod(
        f"spreading-pod-{i}", ns, {"color": "blue"}, SMALL, topologySpreadConstraints=[_spread("DoNotSchedule")]
    ),
    "pod-with-preferred-topology-spreading": lambda ns, i: _pod(
        f"spreading-pod-{i}", ns, {"color": "blue"}, SMALL, topologySpreadConstraints=[_spread("ScheduleAnyway")]
    ),
    "pod-with-node-inclusion-policy": lambda ns, i: _pod(
        f"spreading-pod-with-node-inclusion-policy-{i}",
        ns,
        {"foo": "bar"},
        SMALL,
        topologySpreadConstraints=[_INCLUSION],
    ),
    "pod-with-label": lambda ns, i: _pod(f"pod-{i}", ns, _APP),
    "pod-with-finalizer": lambda ns, i: _pod(f"pod-{i}", ns, finalizers=("test.k8s.io/finalizer",)),
    "gated-pod-with-pod-affinity": lambda ns, i: _pod(
        f"pod-{i}",
        ns,
        _APP,
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": _APP}, "topologyKey": HOSTNAME}
                ]
            }
        },
        schedulingGates=[{"name": "scheduling-gate-1"}],
    ),
    # misc/pod-with-extended-resource.yaml: pod i asks for the extended resource only node i has.
    "pod-with-extended-resource": lambda ns, i: _pod(
        f"test-extended-resource-{i}", ns, requests={f"foo.com/bar-{i}": "1"}
    ),
    **{t: _affinity_maker(t) for t in _AFFINITY_TEMPLATES},
    **DRA_POD_TEMPLATES,
}


def _volume_objects(namespace: str, i: int, csi: bool) -> list[Obj]:
    """pv-aws.yaml / pv-csi.yaml and pvc.yaml for pod i: a PV `<ns>-vol-<i>` and claim `pvc-<i>`, pre-bound."""
    pv_name = f"{namespace}-vol-{i}"
    source = (
        {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": pv_name}}
        if csi
        else {"awsElasticBlockStore": {"volumeID": pv_name}}
    )
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name},
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "capacity": {"storage": "1Gi"},
            "persistentVolumeReclaimPolicy": "Retain",
            "claimRef": {"namespace": namespace, "name": f"pvc-{i}"},
            **source,
        },
        "status": {"phase": "Bound"},
    }
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": f"pvc-{i}",
            "namespace": namespace,
            "annotations": {"pv.kubernetes.io/bind-completed": "true"},
        },
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeName": pv_name,
        },
        "status": {"phase": "Bound"},
    }
    return [pv, pvc]


# ---------------------------------------------------------------- other objects


def _node(name: str, pods: str = "110", **capacity: str) -> Obj:
    """templates/node-default.yaml: 4 CPU, 32Gi, Ready; named and labelled kubernetes.io/hostname as upstream does."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name}},
        "spec": {},
        "status": {
            "capacity": {"pods": pods, "cpu": "4", "memory": "32Gi", **capacity},
            "conditions": [{"status": "True", "type": "Ready"}],
            "phase": "Running",
        },
    }


def _tainted(node: Obj) -> Obj:
    node["spec"]["taints"] = [{"effect": "NoSchedule", "key": "foo"}]
    return node


def _dra_node(node: Obj) -> Obj:
    node["metadata"]["labels"]["node-with-dra"] = "true"
    return node


def _extended(node: Obj, i: int) -> Obj:
    node["metadata"]["labels"]["node-with-extended-resource"] = "true"
    node["status"]["capacity"][f"foo.com/bar-{i}"] = "1"
    return node


# template -> (generateName, fixed name?, make(name, index))
NODE_TEMPLATES: dict[str, tuple[str, bool, Callable[[str, int], Obj]]] = {
    "node-default": ("scheduler-perf-", False, lambda name, i: _node(name)),
    "node-with-name": ("scheduler-perf-node", True, lambda name, i: _node(name, pods="90000")),
    "node-with-taint": ("taint-node-", False, lambda name, i: _tainted(_node(name))),
    "node-with-extended-resource": (
        "scheduler-perf-extended-resource-",
        False,
        lambda name, i: _extended(_node(name), i),
    ),
    # dra/templates/node-with-dra-test-driver.yaml: node-default's capacity, labelled node-with-dra=true
    "node-with-dra-test-driver": ("scheduler-perf-dra-", False, lambda name, i: _dra_node(_node(name))),
}


def _churn_node(namespace: str, i: int) -> Obj:
    """templates/churn/node-default.yaml: a Ready node that takes no pods."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"node-churn-{i}", "labels": {HOSTNAME: f"node-churn-{i}"}},
        "status": {"capacity": {"pods": "0"}, "conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"},
    }


def _service(name: str, namespace: str, selector: dict[str, str], port: int, target: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": selector, "ports": [{"protocol": "TCP", "port": port, "targetPort": target}]},
    }


OTHER_TEMPLATES: dict[str, Maker] = {
    "churn/node-default": _churn_node,
    "churn/service-default": lambda ns, i: _service(f"service-churn-{i}", ns, {"app": "foo"}, 8080, 8080),
    "service": lambda ns, i: _service(f"service-{i}", ns, _APP, 80, 8000),  # templates/service.yaml
}


def _make(template: str, namespace: str, i: int) -> Obj:
    return (POD_TEMPLATES.get(template) or OTHER_TEMPLATES.get(template) or DRA_TEMPLATES[template])(namespace, i)


# ---------------------------------------------------------------- workload table


@dataclass(frozen=True)
class Nodes:
    """createNodes: `count` nodes from a template, with labelNodePrepareStrategy zones (round-robin) or
    nodeAllocatableStrategy for EBS CSI volumes ("csi", or "migrated" for the in-tree plugin migrated to it)."""

    count: int
    template: str = "node-default"
    zones: tuple[str, ...] = ()
    csi: str = ""


@dataclass(frozen=True)
class Pods:
    """createPods (or createPodSets when `namespaces` > 0: `count` pods in each of `<namespace>-0..n-1`);
    `volume` adds a pre-bound PV and claim per pod, as persistentVolume(Claim)TemplatePath do.

    `steady` > 0 is createPods' steadyState for that many seconds: `count` pods; once all are scheduled,
    they are deleted and `count` new ones created (batch k: indexes k*count..), until the time is up."""

    count: int
    template: str
    namespace: str
    namespaces: int = 0
    volume: str = ""  # "", "aws" or "csi"
    steady: float = 0.0

    def namespace_names(self) -> list[str]:
        return [f"{self.namespace}-{k}" for k in range(self.namespaces)] if self.namespaces else [self.namespace]

    def objects(self, batch: int = 0) -> Iterator[Obj]:
        """The pods (with their volumes); of one batch when steady."""
        for ns in self.namespace_names():
            for i in range(batch * self.count, (batch + 1) * self.count):
                if self.volume:
                    yield from _volume_objects(ns, i, self.volume == "csi")
                pod = POD_TEMPLATES[self.template](ns, i)
                if self.volume:
                    pod["spec"]["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{i}"}}]
                yield pod

    def total(self) -> int:
        return self.count * max(1, self.namespaces)


@dataclass(frozen=True)
class Churn:
    """churn op: every `interval` seconds, per template, `create` makes one more object; `recreate` (one slot)
    creates the objects on even ticks and deletes them on odd ones."""

    interval: float
    mode: str
    templates: tuple[str, ...]
    namespace: str

    def tick(self, k: int) -> tuple[list[Obj], list[Obj]]:
        """Objects to create and to delete at tick k."""
        if self.mode == "recreate" and k % 2:
            return [], [_make(t, self.namespace, k - 1) for t in self.templates]
        return [_make(t, self.namespace, k) for t in self.templates], []


@dataclass(frozen=True)
class Deletes:
    """deletePods: the setup pods of `namespace`, `rate` per second from the start of the measurement.
    A pod with finalizers is only marked (deletionTimestamp), as the API server does."""

    namespace: str
    rate: float


@dataclass(frozen=True)
class Create:
    """createAny: objects 0..count-1 of a template, in `namespace` when namespaced. `scales` is off where
    pod templates name the objects by index (DeviceClasses of extended resources): a scaled run keeps them all."""

    template: str
    namespace: str = ""
    count: int = 1
    scales: bool = True

    def objects(self) -> list[Obj]:
        return [_make(self.template, self.namespace, i) for i in range(self.count)]


@dataclass(frozen=True)
class Spec:
    name: str
    threshold: int | None
    nodes: tuple[Nodes, ...]
    setup: tuple[Pods, ...]
    measure: Pods
    ns_labels: bool = False  # createNamespaces with namespace-with-labels.yaml: every namespace team=devops
    extra: tuple[Create, ...] = ()
    churn: Churn | None = None
    deletes: Deletes | None = None
    upstream_size: bool = True  # False once scaled or resized: the threshold then only paces the churn
    driver: int = 0  # createResourceDriver: a slice of this many devices (maxClaimsPerNode) per DRA node
    allocate: str = ""  # allocResourceClaims: the claims of this namespace get allocated in the setup
    config: Obj | None = None  # a KubeSchedulerConfiguration (schedulerConfigPath); None: the defaults

    def target(self) -> int | None:
        """The threshold to compare with: upstream's, at upstream's size only."""
        return self.threshold if self.upstream_size else None

    def uses_dra(self) -> bool:
        """DRA objects or pods: the run needs the resourceclaim controller."""
        templates = [c.template for c in self.extra] + [p.template for p in (*self.setup, self.measure)]
        return bool(self.driver) or any(t.startswith("dra/") for t in templates)


def _simple(name: str, threshold: int, nodes: Nodes, init: Pods | None, measure: Pods, **kw: Any) -> Spec:
    return Spec(name, threshold, (nodes,), (init,) if init else (), measure, **kw)


def _pair(name: str, threshold: int, nodes: Nodes, template: str, init: int, measure: int) -> Spec:
    """The inter-pod affinity testcases: init pods in sched-0, measured pods in sched-1, one template."""
    return _simple(name, threshold, nodes, Pods(init, template, "sched-0"), Pods(measure, template, "sched-1"))


def _ns_selector(name: str, threshold: int, nodes: Nodes, template: str, per_ns: int, measure: int) -> Spec:
    """The *WithNSSelector testcases: 100 labelled namespaces of init pods, measured pods in measure-ns-0."""
    init = Pods(per_ns, template, "init-ns", namespaces=100)
    return _simple(name, threshold, nodes, init, Pods(measure, template, "measure-ns-0"), ns_labels=True)


N5K = Nodes(5000)
ZONE1 = Nodes(5000, zones=("zone1",))
MOONS = Nodes(5000, zones=("moon-1", "moon-2", "moon-3"))
ONE = Nodes(1, "node-with-name")
D = "pod-default"
HIGH_LARGE = Churn(0.2, "create", ("pod-high-priority-large-cpu",), "namespace-2")

# One workload per entry, as upstream's workloads.yaml names it; kept compact by hand.
# fmt: off
SPECS: tuple[Spec, ...] = (
    _simple("SchedulingBasic/5000Nodes_10000Pods", 680, N5K,
            Pods(1000, D, "namespace-1"), Pods(10000, D, "namespace-2")),
    _simple("SchedulingBasic/5000Nodes_50000Pods", 790, N5K,
            Pods(5000, D, "namespace-1"), Pods(50000, D, "namespace-2")),
    Spec("SchedulingDaemonset/15000Nodes", 1100, (ONE, Nodes(15000)), (), Pods(30000, "daemonset-pod", "namespace-2")),
    _simple("SchedulingWithMixedChurn/5000Nodes_10000Pods", 710, N5K, None, Pods(10000, D, "namespace-2"),
            churn=Churn(1.0, "recreate", ("churn/node-default", "pod-high-priority-large-cpu", "churn/service-default"),
                        "namespace-1")),
    Spec("SchedulingWhileGated/1Node_10000GatedPods", 910, (ONE,),
         (Pods(10000, "gated-pod", "namespace-1"), Pods(20000, "light-pod", "namespace-3")),
         Pods(20000, "light-pod", "namespace-5"), deletes=Deletes("namespace-3", 50)),
    _simple("SchedulingDeletedPodsWithFinalizers/5000Node_5000DeletingPods", 830, N5K,
            Pods(5000, "pod-with-finalizer", "namespace-1"), Pods(5000, "light-pod", "namespace-3"),
            deletes=Deletes("namespace-1", 100)),
    _simple("SchedulingWithExtendedResource/5000pods_5000nodes_DRAExtendedResourceEnabled", 180,
            Nodes(5000, "node-with-extended-resource"), None, Pods(5000, "pod-with-extended-resource", "test")),
    _simple("PreemptionBasic/500Nodes", 18, Nodes(500),
            Pods(2000, "pod-low-priority", "namespace-1"), Pods(500, "pod-high-priority", "namespace-2")),
    _simple("PreemptionAsync/5000Nodes", 570, N5K,
            Pods(20000, "pod-low-priority", "namespace-1"), Pods(5000, D, "namespace-3"),
            churn=Churn(0.2, "create", ("pod-high-priority",), "namespace-2")),
    _simple("Unschedulable/5kNodes/100Init/10kPods", 590, N5K,
            Pods(100, D, "namespace-1"), Pods(10000, D, "namespace-3"), churn=HIGH_LARGE),
    _simple("Unschedulable/5kNodes/20kInit/10kPods", 600, N5K,
            Pods(20000, D, "namespace-1"), Pods(10000, D, "namespace-3"), churn=HIGH_LARGE),
    _pair("SchedulingPodAntiAffinity/5000Nodes_2000Pods", 180, N5K, "pod-with-pod-anti-affinity", 1000, 2000),
    _simple("SchedulingPodMatchingAntiAffinity/5000Nodes_5000Pods", 600, N5K,
            Pods(1000, "pod-with-pod-anti-affinity", "sched-0"),
            Pods(5000, "pod-with-pod-anti-affinity-label", "sched-1")),
    _pair("SchedulingPodAffinity/5000Nodes_5000Pods", 70, ZONE1, "pod-with-pod-affinity", 5000, 5000),
    _pair("SchedulingPreferredPodAffinity/5000Nodes_5000Pods", 160, N5K, "pod-with-preferred-pod-affinity",
          5000, 5000),
    _pair("SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods", 190, N5K, "pod-with-preferred-pod-anti-affinity",
          5000, 5000),
    _simple("SchedulingNodeAffinity/5000Nodes_10000Pods", 540, ZONE1,
            Pods(5000, "pod-with-node-affinity", "namespace-1"), Pods(10000, "pod-with-node-affinity", "namespace-2")),
    Spec("MixedSchedulingBasePod/5000Nodes_5000Pods", 540, (ZONE1,),
         tuple(Pods(2000, t, "sched-0") for t in (D, "pod-with-pod-affinity", "pod-with-pod-anti-affinity",
                                                    "pod-with-preferred-pod-affinity",
                                                    "pod-with-preferred-pod-anti-affinity")),
         Pods(5000, D, "namespace-7")),
    # upstream's initNodes is 6000 here, despite the name: 6000 pods that each need a node of their own
    _ns_selector("SchedulingRequiredPodAntiAffinityWithNSSelector/5000Nodes_2000Pods", 140, Nodes(6000),
                 "pod-anti-affinity-ns-selector", 40, 2000),
    _ns_selector("SchedulingPreferredAntiAffinityWithNSSelector/5000Nodes_2000Pods", 180, N5K,
                 "pod-preferred-anti-affinity-ns-selector", 40, 2000),
    _ns_selector("SchedulingRequiredPodAffinityWithNSSelector/5000Nodes_2000Pods", 180, ZONE1,
                 "pod-affinity-ns-selector", 50, 2000),
    _ns_selector("SchedulingPreferredAffinityWithNSSelector/5000Nodes_5000Pods", 190, N5K,
                 "pod-preferred-affinity-ns-selector", 50, 5000),
    _simple("SchedulingGatedPodsWithPodAffinityImpactForThroughput/1Node_10000GatedPods", 750, ONE,
            Pods(10000, "gated-pod-with-pod-affinity", "namespace-1"), Pods(20000, "pod-with-label", "namespace-3")),
    _simple("TopologySpreading/5000Nodes_5000Pods", 460, MOONS,
            Pods(5000, D, "namespace-1"), Pods(5000, "pod-with-topology-spreading", "namespace-2")),
    _simple("PreferredTopologySpreading/5000Nodes_5000Pods", 340, MOONS,
            Pods(5000, D, "namespace-1"), Pods(5000, "pod-with-preferred-topology-spreading", "namespace-2")),
    _simple("DefaultTopologySpreading/5000Nodes_50000Pods", 160, MOONS,
            Pods(5000, D, "namespace-2"), Pods(50000, "pod-with-label", "service-ns"),
            extra=(Create("service", "service-ns"),)),
    Spec("SchedulingWithNodeInclusionPolicy/5000Nodes", 270, (Nodes(4000), Nodes(1000, "node-with-taint")), (),
         Pods(4000, "pod-with-node-inclusion-policy", "namespace-2")),
    _simple("SchedulingSecrets/5000Nodes_10000Pods", 790, N5K,
            Pods(1000, "pod-with-secret-volume", "namespace-1"), Pods(10000, "pod-with-secret-volume", "namespace-2")),
    _simple("SchedulingInTreePVs/5000Nodes_2000Pods", 290, N5K,
            Pods(1000, D, "namespace-1", volume="aws"), Pods(2000, D, "namespace-2", volume="aws")),
    _simple("SchedulingMigratedInTreePVs/5000Nodes_5000Pods", 100, Nodes(5000, csi="migrated"),
            Pods(5000, D, "namespace-1", volume="aws"), Pods(5000, D, "namespace-2", volume="aws")),
    _simple("SchedulingCSIPVs/5000Nodes_5000Pods", 100, Nodes(5000, csi="csi"),
            Pods(5000, D, "namespace-1", volume="csi"), Pods(5000, D, "namespace-2", volume="csi")),
)
# fmt: on

# The DRA workloads of v1.36's scheduler_perf (dra/**/performance-config.yaml), exotic in the reference list.
# Per testcase the largest workload; the integration-test ("fast") one where a testcase has nothing larger.
# SchedulerQueueingHints is GA and locked on in v1.36, so where both variants exist the *_QueueingHintsEnabled
# one is here, with its threshold. Upstream creates the DRA nodes' slices, classes, claims and templates
# in this order before the pods; objects come from the templates above.
DRA_NODE = "node-with-dra-test-driver"
CLASS = Create("dra/deviceclass")
CLAIM_TEMPLATE = "dra/pod-with-claim-template"
SCORING_CONFIG: Obj = {  # dra/extendedresource/scoring/scheduler-config.yaml
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "LeastAllocated",
                            "resources": [
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 1},
                                {"name": "example.com/gpu", "weight": 1},
                            ],
                        }
                    },
                }
            ],
        }
    ],
}


def _dra(
    name: str,
    threshold: int | None,
    dra_nodes: int,
    measure: Pods,
    *extra: Create,
    init: Pods | None = None,
    other_nodes: int = 0,
    **kw: Any,
) -> Spec:
    """nodesWithoutDRA default nodes, then nodesWithDRA DRA nodes; createAny objects in order; init pods, then
    the measured ones."""
    nodes = ((Nodes(other_nodes),) if other_nodes else ()) + (Nodes(dra_nodes, DRA_NODE),)
    return Spec(name, threshold, nodes, (init,) if init else (), measure, extra=extra, **kw)


def _steady(name: str, threshold: int, init_claims: int) -> Spec:
    """SteadyStateClusterResourceClaimTemplate: 500 nodes x 10 devices, `init_claims` of them allocated up front,
    then 10 pods at a time, each with a claim from a template, deleted and made again for 10 s."""
    claims = (Create("dra/resourceclaim", "init", init_claims),) if init_claims else ()
    return _dra(
        name,
        threshold,
        500,
        Pods(10, CLAIM_TEMPLATE, "test", steady=10.0),
        CLASS,
        *claims,
        Create("dra/resourceclaimtemplate", "test"),
        driver=10,
        allocate="init" if init_claims else "",
    )


def _extended_classes(name: str, classes: int, cls: str, pod: str) -> Spec:
    """ExtendedResource_*Classes: 500 nodes x 10 devices; each pod asks for one device as the extended resource
    of one of `classes` DeviceClasses (index modulo classes); 2500 pods fill half, 2500 are measured."""
    return _dra(
        name,
        None,
        500,
        Pods(2500, pod, "test"),
        Create(cls, count=classes, scales=False),
        init=Pods(2500, pod, "init"),
        driver=10,
    )


# fmt: off
DRA_SPECS: tuple[Spec, ...] = (
    _dra("SchedulingWithResourceClaimTemplate/5000pods_500nodes_QueueingHintsEnabled", 56, 500,
         Pods(2500, CLAIM_TEMPLATE, "test"), CLASS, Create("dra/resourceclaimtemplate", "init"),
         Create("dra/resourceclaimtemplate", "test"), init=Pods(2500, CLAIM_TEMPLATE, "init"), driver=10),
    _steady("SteadyStateClusterResourceClaimTemplate/empty_500nodes_QueueingHintsEnabled", 64, 0),
    _steady("SteadyStateClusterResourceClaimTemplate/half_500nodes_QueueingHintsEnabled", 60, 2500),
    _steady("SteadyStateClusterResourceClaimTemplate/full_500nodes_QueueingHintsEnabled", 60, 4990),
    # claims shared by five pods each; two devices per node
    _dra("SchedulingWithResourceClaim/5000pods_500nodes", None, 500, Pods(2500, "dra/pod-with-claim-ref", "test"),
         CLASS, Create("dra/resourceclaim", "init", 500), Create("dra/resourceclaim", "test", 500),
         init=Pods(2500, "dra/pod-with-claim-ref", "init"), driver=2),
    # 2000 pools for every DRA node, each one pod's worth once the init claims took a partition
    _dra("Partitionable/2000pods_100nodes", None, 100, Pods(2000, CLAIM_TEMPLATE, "test", steady=10.0),
         Create("dra/resourceslice-partitionable-countersets", count=2000),
         Create("dra/resourceslice-partitionable-devices", count=2000), CLASS,
         Create("dra/resourceclaim-with-selector", "init", 2000), Create("dra/resourceclaimtemplate-for-two-devices",
                                                                        "test"), allocate="init"),
    _dra("PartitionableBacktracking/fast_QueueingHintsEnabled", None, 1, Pods(1, CLAIM_TEMPLATE, "test"),
         Create("dra/resourceslice-partitionable-backtracking-countersets"),
         Create("dra/resourceslice-partitionable-backtracking-devices"), CLASS,
         Create("dra/resourceclaimtemplate-backtracking", "test"), other_nodes=1),
    # 2000 shareable 80Gi devices for every DRA node; each pod takes 2 x 40Gi
    _dra("ConsumableCapacity/2000pods_100nodes", None, 100, Pods(2000, CLAIM_TEMPLATE, "test", steady=10.0),
         Create("dra/resourceslice-consumablecapacity", count=2000), Create("dra/deviceclass-consumablecapacity"),
         Create("dra/resourceclaimtemplate-consumablecapacity", "test"), driver=20),
    _dra("FirstAvailable/fast_QueueingHintsEnabled", None, 1, Pods(10, CLAIM_TEMPLATE, "test"), CLASS,
         Create("dra/deviceclass-no-devices"), Create("dra/resourceclaimtemplate-first-available", "test"),
         other_nodes=1, driver=10),
    _dra("ExtendedResource/fast", None, 1, Pods(10, "dra/pod-with-extended-resource", "test"),
         Create("dra/deviceclass-extended-resource", count=10, scales=False), other_nodes=1, driver=10),
    _extended_classes("ExtendedResource_25Classes/5000pods_500nodes", 25, "dra/deviceclass-extended-resource",
                      "dra/pod-with-extended-resource-mod25"),
    _extended_classes("ExtendedResource_50Classes/5000pods_500nodes", 50, "dra/deviceclass-extended-resource",
                      "dra/pod-with-extended-resource-mod50"),
    _extended_classes("ImplicitExtendedResource_25Classes/5000pods_500nodes", 25,
                      "dra/deviceclass-implicit-extended-resource", "dra/pod-with-implicit-extended-resource-mod25"),
    # v1.36 gives these no threshold; 164 and 336 are a later upstream's (the reference workloads.yaml)
    _dra("ExtendedResourceScoring/5000pods_500nodes", 164, 500,
         Pods(5000, "dra/pod-with-extended-resource-scoring", "test"),
         Create("dra/deviceclass-extended-resource-scoring", count=20, scales=False), driver=20, config=SCORING_CONFIG),
    _dra("ExtendedResourceScoring/2000pods_200nodes", 336, 200,
         Pods(2000, "dra/pod-with-extended-resource-scoring", "test"),
         Create("dra/deviceclass-extended-resource-scoring", count=10, scales=False), driver=20, config=SCORING_CONFIG),
)
# fmt: on

# DRA workloads of v1.36 (or of the reference list) left out, and why.
DRA_SKIPPED: dict[str, str] = {
    "PublishResourceSlices/500nodes, /5000nodes": "measures how fast the scheduler takes in ResourceSlices; "
    "no pods are scheduled",
    "SchedulingWithResourceClaimTemplate/5000pods_500nodes, SteadyStateClusterResourceClaimTemplate/"
    "{empty,half,full}_500nodes": "SchedulerQueueingHints=false: the gate is GA and locked on in v1.36 "
    "(their _QueueingHintsEnabled twins are here)",
    "DeviceTaintToleration/fast, /fast_QueueingHintsEnabled": "a DeviceTaintRule: DRADeviceTaintRules is beta and "
    "off by default in v1.36",
    "SchedulingWithResourceClaimTemplateListAttributes/empty_500nodes": "not in v1.36's scheduler_perf; "
    "DRAListTypeAttributes is alpha (off) in v1.36",
    "CompatibilityGroups/{empty,half,full}_1000nodes": "not in v1.36's scheduler_perf; DRADeviceCompatibilityGroups "
    "does not exist in v1.36",
    "SharedPodGroupResourceClaim/100podgroups_5000pods, SharedPodGroupResourceClaimTemplate/100podgroups_5000pods": (
        "not in v1.36's scheduler_perf; PodGroups need DRAWorkloadResourceClaims and GenericWorkload, alpha (off)"
    ),
}

SPECS += DRA_SPECS
BY_NAME = {s.name: s for s in SPECS}


def scaled(spec: Spec, scale: int = 1, nodes: int | None = None) -> Spec:
    """`spec` with node, pod and object counts and steady-state seconds divided by `scale` (at least 1 each; a
    createPodSets keeps its pods per namespace and divides the namespaces); `nodes` replaces the count of a
    workload's DRA nodes, or else of its default nodes. The name says so; upstream's threshold no longer applies."""

    def div(n: int) -> int:
        return max(1, n // scale) if n else 0

    groups = tuple(dataclasses.replace(g, count=div(g.count)) for g in spec.nodes)
    setup = tuple(
        dataclasses.replace(p, namespaces=div(p.namespaces))
        if p.namespaces
        else dataclasses.replace(p, count=div(p.count))
        for p in spec.setup
    )
    measure = dataclasses.replace(spec.measure, count=div(spec.measure.count), steady=spec.measure.steady / scale)
    extra = tuple(dataclasses.replace(c, count=div(c.count)) if c.scales else c for c in spec.extra)
    out = dataclasses.replace(spec, nodes=groups, setup=setup, measure=measure, extra=extra)
    if nodes is not None:
        resized = DRA_NODE if any(g.template == DRA_NODE for g in out.nodes) else "node-default"
        groups = tuple(dataclasses.replace(g, count=nodes) if g.template == resized else g for g in out.nodes)
        out = dataclasses.replace(out, name=f"{spec.name}@{nodes}nodes", nodes=groups, upstream_size=False)
    if scale != 1:
        out = dataclasses.replace(out, name=f"{out.name}@1/{scale}", upstream_size=False)
    return out


# ---------------------------------------------------------------- building a workload's objects


def _csinode(node: Obj, migrated: bool) -> Obj:
    """nodeAllocatableStrategy: 39 attachable EBS volumes in the node's allocatable and in its CSINode."""
    node["status"]["capacity"]["attachable-volumes-csi-ebs.csi.aws.com"] = "39"
    name = node["metadata"]["name"]
    meta: Obj = {"name": name}
    if migrated:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": meta,
        "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": name, "allocatable": {"count": 39}}]},
    }


def node_objects(spec: Spec) -> list[Obj]:
    """Every node (and CSINode) of the workload; generated names draw 5 random characters, again on a clash,
    as the API server's generateName retries."""
    rng = random.Random(1)
    taken: set[str] = set()
    out: list[Obj] = []
    for group in spec.nodes:
        prefix, fixed, make = NODE_TEMPLATES[group.template]
        for i in range(group.count):
            name = prefix
            while not fixed and (name == prefix or name in taken):
                name = prefix + "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(5))
            taken.add(name)
            node = make(name, i)
            if group.zones:
                node["metadata"]["labels"][ZONE] = group.zones[i % len(group.zones)]
            if group.csi:
                out.append(_csinode(node, group.csi == "migrated"))
            out.append(node)
    return out


def namespace_objects(spec: Spec) -> list[Obj]:
    """createNamespaces, and the namespaces createPods makes on demand."""
    names = dict.fromkeys(ns for p in (*spec.setup, spec.measure) for ns in p.namespace_names())
    names.update(dict.fromkeys(c.namespace for c in spec.extra if c.namespace))
    if spec.churn:
        names[spec.churn.namespace] = None
    labels = {"labels": dict(TEAM)} if spec.ns_labels else {}
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, **labels}} for ns in names]


def setup_objects(spec: Spec) -> Iterator[Obj]:
    """Namespaces, nodes, the DRA driver's slices, createAny objects (claims allocated where the workload says),
    then the init pods."""
    yield from namespace_objects(spec)
    nodes = node_objects(spec)
    yield from nodes
    objs = [
        driver_slice(n["metadata"]["name"], spec.driver)
        for n in nodes
        if spec.driver and n["kind"] == "Node" and n["metadata"]["name"].startswith("scheduler-perf-dra-")
    ]
    objs += [o for c in spec.extra for o in c.objects()]
    if spec.allocate:
        allocate_claims(spec.allocate, nodes, objs)
    yield from objs
    for pods in spec.setup:
        yield from pods.objects()


def allocate_claims(namespace: str, nodes: list[Obj], objs: list[Obj]) -> None:
    """allocResourceClaims: each claim of `namespace` in turn is allocated by the structured allocator on the
    first node, in a random order drawn per claim, where it fits; its status.allocation is set in place."""
    classes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "DeviceClass"}
    slices = [o for o in objs if o["kind"] == "ResourceSlice"]
    state = AllocatedState()
    base = Allocator(allocated=state, classes=classes, slices=slices, evaluator=CachedSelectors())
    order = [n for n in nodes if n["kind"] == "Node"]
    rng = random.Random(1)
    for claim in (o for o in objs if o["kind"] == "ResourceClaim" and o["metadata"]["namespace"] == namespace):
        allocator = base.with_allocated(state)
        rng.shuffle(order)
        for node in order:
            result = allocator.allocate(node, [claim])
            if result is not None:
                claim["status"] = {"allocation": result[0]}
                state.add_allocation(result[0])
                break
        else:
            raise SystemExit(f"allocResourceClaims: claim {namespace}/{claim['metadata']['name']} fits no node")


# ---------------------------------------------------------------- in-process run


class _Counter:
    def __init__(self, namespace: str) -> None:
        self.prefix = namespace + "/"
        self.bound = 0
        self.attempts = 0

    def on_event(self, event: SchedulerEvent) -> None:
        if event.type == "Bound" and event.pod.startswith(self.prefix):
            self.bound += 1

    def on_outcome(self, outcome: Outcome) -> None:
        self.attempts += 1


def _setup_pods(spec: Spec, namespace: str) -> Iterator[Obj]:
    return (o for p in spec.setup if p.namespace == namespace for o in p.objects() if o["kind"] == "Pod")


def _delete_pod(cluster: EmbeddedCluster, namespace: str, name: str) -> None:
    """deletePods' DELETE: a pod with finalizers only gets deletionTimestamp; one already gone is skipped."""
    pod = cluster.get("Pod", namespace, name)
    if pod is None:
        return
    meta = pod.get("metadata") or {}
    if meta.get("finalizers"):
        cluster.update({**pod, "metadata": {**meta, "deletionTimestamp": cluster.timestamp()}})
    else:
        cluster.delete("Pod", namespace, name)


def _apply_tick(cluster: EmbeddedCluster, churn: Churn, k: int) -> None:
    create, delete = churn.tick(k)
    for obj in delete:
        if cluster.get(obj["kind"], churn.namespace, obj["metadata"]["name"]) is not None:
            cluster.delete(obj["kind"], churn.namespace, obj["metadata"]["name"])
    for obj in create:
        cluster.create(obj)


@dataclass
class Setup:
    clock: VirtualClock
    cluster: EmbeddedCluster
    sched: Scheduler
    counter: _Counter


def run_setup(spec: Spec, seed: int = 1) -> Setup:
    """Create the setup objects and schedule the init pods, untimed."""
    clock = VirtualClock()
    cluster = EmbeddedCluster(clock)
    counter = _Counter(spec.measure.namespace)
    sched = embedded_scheduler(load_config(spec.config), cluster, clock, seed=seed, record=False, observer=counter)
    if spec.uses_dra():
        # kube-controller-manager's resourceclaim controller, as `simulate` plays it: claims from templates,
        # released (and deleted) when their pods go
        names = NameGenerator(random.Random(f"kubesched-claims/{seed}"))
        ResourceClaimController(cluster, names, admit=lambda obj: "").start()
    for obj in setup_objects(spec):
        cluster.create(obj)
    sched.run()
    return Setup(clock, cluster, sched, counter)


def placements(spec: Spec, cluster: EmbeddedCluster) -> dict[tuple[str, str], str]:
    """Where the setup put each init pod: (namespace, name) -> node."""
    out = {}
    for pods in spec.setup:
        for ns in pods.namespace_names():
            for i in range(pods.count):
                name = POD_TEMPLATES[pods.template](ns, i)["metadata"]["name"]
                node = ((cluster.get("Pod", ns, name) or {}).get("spec") or {}).get("nodeName")
                if node:
                    out[ns, name] = node
    return out


def run_inprocess(spec: Spec, st: Setup, min_batches: int = 0) -> dict[str, Any]:
    """Create the measured pods and schedule them on the wall clock; the churn and deletions fire meanwhile.
    A steady-state workload runs for its seconds, then on until a pod and `min_batches` whole batches are bound."""
    clock, cluster, sched, counter = st.clock, st.cluster, st.sched, st.counter
    base = clock.now
    churn = spec.churn
    if churn is not None:
        ticks = itertools.count()

        def tick() -> None:
            _apply_tick(cluster, churn, next(ticks))
            clock.call_later(churn.interval, tick)

        clock.call_at(base, tick)
    if spec.deletes is not None:
        d = spec.deletes
        names = [o["metadata"]["name"] for o in _setup_pods(spec, d.namespace)]
        for i, name in enumerate(names):
            clock.call_at(base + i / d.rate, functools.partial(_delete_pod, cluster, d.namespace, name))
    measure = spec.measure
    objs = list(measure.objects())
    want = measure.total()
    batch, stuck = 0, False
    cpu0 = time.process_time()
    start = time.perf_counter()
    for obj in objs:
        cluster.create(obj)
    while True:
        if measure.steady:
            # steady state: until the time is up, mid-batch as upstream
            done = max(1, min_batches * want)
            if counter.bound >= done and time.perf_counter() - start >= measure.steady:
                break
            if counter.bound >= (batch + 1) * want:
                # the batch is scheduled: delete it and create the next (DeleteCollection, then createPods)
                for obj in measure.objects(batch):
                    if obj["kind"] == "Pod":
                        _delete_pod(cluster, obj["metadata"]["namespace"], obj["metadata"]["name"])
                batch += 1
                for obj in measure.objects(batch):
                    cluster.create(obj)
        elif counter.bound >= want:
            break
        clock.advance_to(base + time.perf_counter() - start)
        clock.run_due()
        qpi = sched.queue.pop()
        if qpi is not None:
            sched.schedule_one(qpi)
            clock.run_due()
            continue
        nxt = clock.next_timer()
        if nxt is None and not sched.queue.has_active_or_backoff():
            stuck = True  # nothing left that could schedule the rest
            break
        clock.advance_to(nxt if nxt is not None else clock.now + 1.0)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    return {
        "bound": counter.bound,
        **({"batches": batch + 1, "stuck": stuck} if measure.steady else {}),
        "seconds": round(elapsed, 3),
        "cpu_seconds": round(cpu, 3),
        "pods_per_second": round(counter.bound / elapsed, 1) if elapsed else 0.0,
        "pods_per_second_cpu": round(counter.bound / cpu, 1) if cpu else 0.0,
        "attempts": counter.attempts,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


# ---------------------------------------------------------------- command mode


def steady_batches(spec: Spec) -> int:
    """Steady-state batches upstream would schedule in its time at exactly its threshold rate (100 pods/s
    without one); at least two, so that a batch is deleted and made again."""
    return max(2, math.ceil(spec.measure.steady * (spec.threshold or 100) / spec.measure.count))


def churn_rounds(spec: Spec) -> int:
    """Churn ticks (or timed deletions) upstream would see while measuring at exactly its threshold rate."""
    seconds = spec.measure.total() / (spec.threshold or 100)
    if spec.churn is not None:
        return math.ceil(seconds / spec.churn.interval)
    if spec.deletes is not None:
        return math.ceil(seconds * spec.deletes.rate)
    return 0


def scenario(spec: Spec) -> Obj | None:
    """The churn and timed deletions as a Scenario document, on the virtual clock."""
    steps: list[Obj] = []
    rounds = churn_rounds(spec)
    if spec.churn is not None:
        for k in range(rounds):
            create, delete = spec.churn.tick(k)
            step: Obj = {"at": round(k * spec.churn.interval, 3)}
            if create:
                step["create"] = create
            if delete:
                step["delete"] = [
                    {"kind": o["kind"], "namespace": spec.churn.namespace, "name": o["metadata"]["name"]}
                    for o in delete
                ]
            steps.append(step)
    if spec.deletes is not None:
        d = spec.deletes
        pods = list(_setup_pods(spec, d.namespace))[:rounds]
        for i, pod in enumerate(pods):
            ref = {"kind": "Pod", "namespace": d.namespace, "name": pod["metadata"]["name"]}
            if pod["metadata"].get("finalizers"):
                patch = {"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}
                steps.append({"at": round(i / d.rate, 3), "update": [{**ref, "patch": patch}]})
            else:
                steps.append({"at": round(i / d.rate, 3), "delete": [ref]})
    if spec.measure.steady:
        # a batch a virtual second: the previous one deleted, then the next created
        for k in range(1, steady_batches(spec)):
            gone = [
                {"kind": "Pod", "namespace": o["metadata"]["namespace"], "name": o["metadata"]["name"]}
                for o in spec.measure.objects(k - 1)
                if o["kind"] == "Pod"
            ]
            steps += [{"at": k, "delete": gone}, {"at": k, "create": list(spec.measure.objects(k))}]
    if not steps:
        return None
    return {"apiVersion": "kubesched.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "churn"}, "steps": steps}


def _dump(path: Path, objs: Iterator[Obj] | list[Obj]) -> Path:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    with path.open("w") as f:
        yaml.dump_all(objs, f, Dumper=dumper, sort_keys=False)
    return path


def write_manifests(spec: Spec, where: dict[tuple[str, str], str], out: Path) -> tuple[list[Path], list[Path]]:
    """setup.yaml (init pods bound where the in-process setup put them; after config.yaml when the workload has
    its own scheduler configuration), measure.yaml and scenario.yaml: the files of the setup run and of the full
    run."""

    def bound(objs: Iterator[Obj]) -> Iterator[Obj]:
        for o in objs:
            node = (
                where.get((o["metadata"].get("namespace", ""), o["metadata"]["name"])) if o["kind"] == "Pod" else None
            )
            if node:
                o["spec"]["nodeName"] = node
            yield o

    setup = [_dump(out / "config.yaml", [spec.config])] if spec.config else []
    setup.append(_dump(out / "setup.yaml", bound(setup_objects(spec))))
    full = [*setup, _dump(out / "measure.yaml", spec.measure.objects())]
    doc = scenario(spec)
    if doc is not None:
        full.append(_dump(out / "scenario.yaml", [doc]))
    return setup, full


def run_command(files: list[Path], out: Path, seed: int = 1) -> dict[str, Any]:
    """`kubesched simulate FILES --output json --record none` in a child: wall and CPU seconds, peak RSS."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    argv = [sys.executable, "-m", "kubesched", "simulate", *map(str, files)]
    argv += ["--output", "json", "--record", "none", "--seed", str(seed)]
    with out.open("w") as stdout, (out.parent / (out.name + ".err")).open("w") as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "rc": proc.returncode,
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
    }


def command_bound(out: Path, namespace: str) -> int:
    with out.open() as f:
        result = json.load(f)
    return sum(1 for p in result["pods"] if p["namespace"] == namespace and p.get("node"))


def measure_command(spec: Spec, where: dict[tuple[str, str], str], seed: int = 1) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kubesched-bench-") as tmp:
        d = Path(tmp)
        setup_files, full_files = write_manifests(spec, where, d)
        setup = run_command(setup_files, d / "setup.json", seed)
        full = run_command(full_files, d / "full.json", seed)
        for run, name in ((setup, "setup"), (full, "full")):
            if run["rc"] != 0:
                err = (d / f"{name}.json.err").read_text()[-2000:]
                return {"error": f"{name} run exited {run['rc']}: {err}"}
        bound = command_bound(d / "full.json", spec.measure.namespace)
    dwall, dcpu = full["wall"] - setup["wall"], full["cpu"] - setup["cpu"]
    return {
        "bound": bound,
        "setup_wall": round(setup["wall"], 3),
        "full_wall": round(full["wall"], 3),
        "setup_cpu": round(setup["cpu"], 3),
        "full_cpu": round(full["cpu"], 3),
        "pods_per_second": round(bound / dwall, 1) if dwall > 0 else None,
        "pods_per_second_cpu": round(bound / dcpu, 1) if dcpu > 0 else None,
        "peak_rss_mb": max(setup["peak_rss_mb"], full["peak_rss_mb"]),
        "churn_rounds": churn_rounds(spec),
        **({"batches": steady_batches(spec)} if spec.measure.steady else {}),
    }


# ---------------------------------------------------------------- driver and report


def run(spec: Spec, mode: str, seed: int = 1) -> dict[str, Any]:
    """One workload in `mode` (inprocess, command or both): the JSON record of it."""
    row: dict[str, Any] = {"workload": spec.name, "threshold": spec.target(), "measured": spec.measure.total()}
    if spec.measure.steady:
        row["steady_seconds"] = spec.measure.steady  # `measured` pods a batch, for that long
    st = run_setup(spec, seed)
    if mode in ("inprocess", "both"):
        row["inprocess"] = run_inprocess(spec, st)
    if mode in ("command", "both"):
        where = placements(spec, st.cluster)
        del st
        row["command"] = measure_command(spec, where, seed)
    return row


def _fmt(v: Any) -> str:
    return "-" if v is None else str(v)


def below(row: dict[str, Any], key: str = "pods_per_second_cpu") -> list[str]:
    """The modes in which the workload missed its threshold or left measured pods unbound.

    Judged by pods per CPU second by default: on a shared machine the wall clock mostly counts other
    processes' work, and the scheduler is one thread, so CPU seconds are what an idle core would take."""
    out = []
    for mode in ("inprocess", "command"):
        r = row.get(mode)
        if r is None:
            continue
        if "error" in r:
            out.append(f"{mode} (error)")
        elif r.get("stuck") or r["bound"] < _wanted(row, mode):
            out.append(f"{mode} (stuck)")
        elif row["threshold"] and (r[key] or 0) < row["threshold"]:
            out.append(mode)
    return out


def _wanted(row: dict[str, Any], mode: str) -> int:
    """Pods that must be bound: all measured ones; a steady state in-process, at least one; through the
    command, all of its batches."""
    if not row.get("steady_seconds"):
        return int(row["measured"])
    return 1 if mode == "inprocess" else int(row["measured"]) * int(row["command"].get("batches", 1))


def _measured(row: dict[str, Any]) -> str:
    if row.get("steady_seconds"):
        return f"{row['measured']} a batch for {row['steady_seconds']:g} s"
    return str(row["measured"])


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| workload | threshold | in-process pods/s (wall / CPU) | in-process CPU s "
        "| command pods/s, marginal (wall / CPU) | command wall s (setup / full) "
        "| peak RSS MB (in-process / command) | bound (in-process / command) of measured | below threshold (CPU) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ip, cmd = r.get("inprocess") or {}, r.get("command") or {}
        ip_rate = f"{_fmt(ip.get('pods_per_second'))} / {_fmt(ip.get('pods_per_second_cpu'))}"
        cmd_rate = f"{_fmt(cmd.get('pods_per_second'))} / {_fmt(cmd.get('pods_per_second_cpu'))}"
        cmd_walls = f"{cmd['setup_wall']} / {cmd['full_wall']}" if "full_wall" in cmd else "-"
        if "error" in cmd:
            cmd_rate = cmd_walls = "error"
        lines.append(
            f"| {r['workload']} | {_fmt(r['threshold'])} | {ip_rate} | {_fmt(ip.get('cpu_seconds'))} "
            f"| {cmd_rate} | {cmd_walls} | {_fmt(ip.get('peak_rss_mb'))} / {_fmt(cmd.get('peak_rss_mb'))} "
            f"| {_fmt(ip.get('bound'))} / {_fmt(cmd.get('bound'))} of {_measured(r)} "
            f"| {', '.join(below(r)) or 'no'} |"
        )
    return "\n".join(lines)


def select(patterns: list[str], only_failing: Path | None) -> list[Spec]:
    """Workloads named exactly, or whose name contains a pattern ("all": every one); with `only_failing`,
    those a previous run's JSON lines show below threshold or stuck."""
    exact = [p for p in patterns if p in BY_NAME]
    loose = [p for p in patterns if p not in BY_NAME]
    chosen = [s for s in SPECS if not patterns or s.name in exact or any(p == "all" or p in s.name for p in loose)]
    if only_failing is not None:
        failing = set()
        for line in only_failing.read_text().splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                if below(row):
                    failing.add(row["workload"].split("@")[0])
        chosen = [s for s in chosen if s.name in failing]
    return chosen


def _child(spec: Spec, args: argparse.Namespace, nodes: int | None) -> list[dict[str, Any]]:
    """One workload in a fresh interpreter, so its peak RSS is its own; past --timeout its process group goes."""
    argv = [sys.executable, __file__, spec.name, "--mode", args.mode, "--scale", str(args.scale)]
    argv += ["--seed", str(args.seed), "--no-table", *(["--nodes", str(nodes)] if nodes is not None else [])]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return [{"workload": spec.name, "threshold": spec.threshold, "error": f"over --timeout {args.timeout}s"}]
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not rows:
        rows = [{"workload": spec.name, "threshold": spec.threshold, "error": stderr[-2000:]}]
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workload", nargs="*", help='"all" (the default), a name, or part of names')
    ap.add_argument("--filter", action="append", default=[], metavar="SUBSTRING", help="also pick names with this")
    ap.add_argument("--only-failing", type=Path, metavar="RESULTS", help="JSON lines of an earlier run: rerun the")
    ap.add_argument("--mode", choices=["inprocess", "command", "both"], default="both")
    ap.add_argument("--scale", type=int, default=1, help="divide node, pod and namespace counts by this")
    ap.add_argument("--nodes", type=int, nargs="+", help="replace the default-node count (a sweep)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, help="seconds a workload may take when several run (default: no limit)")
    ap.add_argument("--list", action="store_true", help="print the workload names and thresholds")
    ap.add_argument("--no-table", action="store_true", help="JSON lines only")
    args = ap.parse_args()
    if args.scale < 1:
        ap.error("--scale must be at least 1")
    specs = select(args.workload + args.filter, args.only_failing)
    if args.list:
        for s in specs:
            print(f"{s.name}\t{s.threshold}")
        for names, reason in DRA_SKIPPED.items():
            print(f"# skipped: {names}: {reason}")
        return 0
    if not specs:
        ap.error("no workload matches")
    jobs = [(s, n) for s in specs for n in (args.nodes or [None])]
    rows: list[dict[str, Any]] = []
    for spec, n in jobs:
        if len(jobs) == 1:
            results = [run(scaled(spec, args.scale, n), args.mode, args.seed)]
        else:
            results = _child(spec, args, n)
        for r in results:
            print(json.dumps(r), flush=True)
        rows += results
    if not args.no_table:
        print()
        print(table([r for r in rows if "measured" in r]))
        for r in rows:
            if "measured" not in r:
                print(f"{r['workload']}: failed: {r['error']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
