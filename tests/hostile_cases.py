"""Hostile and borderline manifests with the verdict of kube-apiserver v1.36 for each.

Every case is one object as `kubectl apply` would send it. `verdict` is a piece of the
API server's answer (None: it takes the object), found by POSTing the object to a real
v1.36 API server with dry run and strict field validation; kubesched's error must hold
the same words (`ours` where its wording differs, e.g. it names the field). The
table is checked against kubesched in tests/test_loader_hostile.py and, where the
control plane is available, against the API server in tests/upstream/test_apiserver_verdicts.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.api.object import Obj

LABEL_VALUE_RULE = "a valid label must be an empty string or consist of alphanumeric characters"
NAME_PART_RULE = "name part must consist of alphanumeric characters, '-', '_' or '.'"
SUBDOMAIN_RULE = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"


@dataclass(frozen=True)
class Case:
    id: str
    obj: Obj
    verdict: str | None  # a piece of the API server's answer; None: accepted
    ours: str | None = None  # a piece of kubesched's, where it words it differently (default: verdict)
    context: tuple[Obj, ...] = field(default_factory=tuple)  # objects that exist first (created for real upstream)

    @property
    def expected(self) -> str | None:
        return self.ours if self.ours is not None else self.verdict


def pod(spec: Obj | None = None, meta: Obj | None = None, **top: Any) -> Obj:
    s: Obj = {"containers": [{"name": "c", "image": "i"}]}
    s.update(spec or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta or {"name": "p"}, "spec": s, **top}


def ctr(resources: Obj | None = None, **kw: Any) -> Obj:
    c: Obj = {"name": "c", "image": "i"}
    if resources is not None:
        c["resources"] = resources
    c.update(kw)
    return c


def node(spec: Obj | None = None, meta: Obj | None = None, status: Obj | None = None) -> Obj:
    o: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": meta or {"name": "n"}}
    if spec is not None:
        o["spec"] = spec
    if status is not None:
        o["status"] = status
    return o


def pvc(spec: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"}, "spec": spec}


def pv(spec: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "v"}, "spec": spec}


def sc(**fields: Any) -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}, **fields}


def pc(name: str = "pc", **fields: Any) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, **fields}


BASE_PVC: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
BASE_PV: Obj = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/x"}}
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


TEMPLATE: Obj = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
JOB_TEMPLATE: Obj = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}


def workload(kind: str, spec: Obj, name: str = "w") -> Obj:
    """A workload of `kind` (apps/v1, batch/v1 or v1 for ReplicationController) with the given spec."""
    api = {"Job": "batch/v1", "CronJob": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name}, "spec": spec}


def replicated(**spec: Any) -> Obj:
    return {"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE, **spec}


def cron(**spec: Any) -> Obj:
    return {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}, **spec}


def _node_affinity(terms: list[Obj]) -> Obj:
    return {"affinity": {"nodeAffinity": {REQ: {"nodeSelectorTerms": terms}}}}


CASES: list[Case] = [
    # Strict decoding: unknown fields and wrong types.
    Case(
        "misspelled requests",
        pod({"containers": [ctr({"reqeusts": {"cpu": "1"}})]}),
        'strict decoding error: unknown field "spec.containers[0].resources.reqeusts"',
    ),
    Case("misspelled nodeSelector", pod({"nodeselector": {"a": "b"}}), 'unknown field "spec.nodeselector"'),
    Case(
        "two unknown fields",
        pod({"nodeselector": {"a": "b"}}, {"name": "p", "foo": 1}),
        'unknown field "metadata.foo", unknown field "spec.nodeselector"',
    ),
    Case(
        "string where a bool belongs",
        node({"unschedulable": "false"}),
        "json: cannot unmarshal string into Go struct field NodeSpec.spec.unschedulable of type bool",
    ),
    Case(
        "YAML 1.1 boolean as a label",
        node(meta={"name": "n", "labels": {"ssd": True}}),
        "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string",
    ),
    Case(
        "number as a label",
        node(meta={"name": "n", "labels": {"ssd": 1}}),
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
    ),
    Case(
        "metadata a list",
        node(meta=[1]),  # type: ignore[arg-type]
        "json: cannot unmarshal array into Go struct field Node.metadata of type v1.ObjectMeta",
    ),
    Case(
        "namespace labels a list",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "labels": ["a"]}},
        "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string",
    ),
    Case(
        "taints not a list",
        node({"taints": {"key": "a"}}),
        "json: cannot unmarshal object into Go struct field NodeSpec.spec.taints of type []v1.Taint",
    ),
    Case(
        "priority a string",
        pod({"priority": "5"}),
        "json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type int32",
    ),
    Case(
        "priority a fraction",
        pod({"priority": 5.5}),
        "json: cannot unmarshal number 5.5 into Go struct field PodSpec.spec.priority of type int32",
    ),
    Case(
        "PriorityClass value beyond int32",
        pc(value=3000000000),
        "json: cannot unmarshal number 3000000000 into Go struct field PriorityClass.value of type int32",
    ),
    Case(
        "globalDefault a string",
        pc(value=5, globalDefault="true"),
        "json: cannot unmarshal string into Go struct field PriorityClass.globalDefault of type bool",
    ),
    Case(
        "containerPort a string",
        pod({"containers": [ctr(ports=[{"containerPort": "80"}])]}),
        "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort",
    ),
    Case(
        "cpu a boolean",
        pod({"containers": [ctr({"requests": {"cpu": True}})]}),
        "quantities must match the regular expression",
    ),
    Case("cpu a fraction", pod({"containers": [ctr({"requests": {"cpu": 0.5}})]}), None),
    Case(
        "bad quantity suffix",
        node(status={"capacity": {"cpu": "1K"}}),
        "unable to parse quantity's suffix",
    ),
    Case(
        "bad quantity",
        node(status={"capacity": {"cpu": "1_000"}}),
        "quantities must match the regular expression",
    ),
    # Quantities the API server takes, however large or small.
    Case("cpu 1e5000", node(status={"capacity": {"cpu": "1e5000", "memory": "1e5000"}}), None),
    Case("memory in exabytes", node(status={"capacity": {"memory": "100Ei"}}), None),
    Case("a nano of cpu", node(status={"capacity": {"cpu": "1n"}}), None),
    Case("1e-5000 of memory", node(status={"capacity": {"memory": "1e-5000"}}), None),
    # Resources.
    Case(
        "negative request",
        pod({"containers": [ctr({"requests": {"cpu": "-1"}})]}),
        'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ),
    Case(
        "negative limit",
        pod({"containers": [ctr({"limits": {"memory": "-1"}})]}),
        'spec.containers[0].resources.limits[memory]: Invalid value: "-1": must be greater than or equal to 0',
    ),
    Case(
        "request above limit",
        pod({"containers": [ctr({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})]}),
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ),
    Case(
        "fractional extended resource",
        pod({"containers": [ctr({"requests": {"example.com/gpu": "0.5"}, "limits": {"example.com/gpu": "0.5"}})]}),
        "must be an integer",
    ),
    Case(
        "extended request without limit",
        pod({"containers": [ctr({"requests": {"example.com/gpu": "1"}})]}),
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
    ),
    Case(
        "extended request unlike its limit",
        pod({"containers": [ctr({"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}})]}),
        'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2',
    ),
    Case(
        "unqualified resource name",
        pod({"containers": [ctr({"requests": {"gpu": "1"}})]}),
        'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers',
    ),
    Case(
        "resource name with two slashes",
        pod({"containers": [ctr({"requests": {"foo/bar/baz": "1"}})]}),
        "doesn't follow extended resource name standard",
    ),
    Case("kubernetes.io resource", pod({"containers": [ctr({"requests": {"kubernetes.io/foo": "1"}})]}), None),
    Case(
        "negative overhead",
        pod({"overhead": {"cpu": "-1"}}),
        'spec.overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ),
    Case(
        "negative init container request",
        pod({"initContainers": [ctr({"requests": {"cpu": "-1"}}, name="i")]}),
        'spec.initContainers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ),
    Case(
        "hugepages not a multiple of the page",
        pod(
            {
                "containers": [
                    ctr(
                        {
                            "requests": {"hugepages-2Mi": "3Mi", "memory": "1Gi"},
                            "limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"},
                        }
                    )
                ]
            }
        ),
        "3Mi is not positive integer multiple of hugepages-2Mi",
    ),
    Case(
        "negative pod-level request",
        pod({"resources": {"requests": {"cpu": "-1"}}}),
        'spec.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ),
    Case(
        "unsupported pod-level resource",
        pod({"resources": {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}}),
        'spec.resources.requests[example.com/gpu]: Unsupported value: "example.com/gpu"',
    ),
    Case(
        "negative node allocatable",
        node(status={"allocatable": {"cpu": "-1"}}),
        'status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0',
    ),
    Case(
        "fractional extended allocatable",
        node(status={"allocatable": {"example.com/gpu": "0.5"}}),
        "status.allocatable.example.com/gpu: Invalid value:",
    ),
    # Tolerations and taints.
    Case(
        "toleration operator misspelled",
        pod({"tolerations": [{"key": "a", "operator": "Equals", "value": "b"}]}),
        'spec.tolerations[0].operator: Unsupported value: "Equals": supported values: "Equal", "Exists"',
    ),
    Case(
        "toleration effect misspelled",
        pod({"tolerations": [{"key": "a", "operator": "Exists", "effect": "NoSchedul"}]}),
        'spec.tolerations[0].effect: Unsupported value: "NoSchedul": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
    ),
    Case(
        "Exists with a value",
        pod({"tolerations": [{"key": "a", "operator": "Exists", "value": "b"}]}),
        "value must be empty when `operator` is 'Exists'",
    ),
    Case(
        "Equal without a key",
        pod({"tolerations": [{"operator": "Equal", "value": "b"}]}),
        "operator must be Exists when `key` is empty",
    ),
    Case(
        "tolerationSeconds without NoExecute",
        pod({"tolerations": [{"key": "a", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]}),
        "effect must be 'NoExecute' when `tolerationSeconds` is set",
    ),
    Case("toleration key with a space", pod({"tolerations": [{"key": "a b", "operator": "Exists"}]}), NAME_PART_RULE),
    Case(
        "alpha Lt toleration",
        pod({"tolerations": [{"key": "a", "operator": "Lt", "value": "5"}]}),
        'Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"',
    ),
    Case("toleration without operator", pod({"tolerations": [{"key": "a"}]}), None),
    Case("taint without effect", node({"taints": [{"key": "a", "value": "b"}]}), "taints[0].effect: Required value"),
    Case(
        "taint effect misspelled",
        node({"taints": [{"key": "a", "effect": "NoSchedul"}]}),
        'taints[0].effect: Unsupported value: "NoSchedul"',
    ),
    Case("taint without key", node({"taints": [{"effect": "NoSchedule"}]}), 'taints[0].key: Invalid value: ""'),
    Case(
        "taint twice",
        node({"taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "x", "effect": "NoSchedule"}]}),
        "taints must be unique by key and effect pair",
    ),
    # Topology spread.
    Case(
        "minDomains 0",
        pod(
            {
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 0}
                ]
            }
        ),
        "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than zero",
    ),
    Case(
        "minDomains with ScheduleAnyway",
        pod(
            {
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}
                ]
            }
        ),
        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
    ),
    Case(
        "whenUnsatisfiable misspelled",
        pod({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "Never"}]}),
        'whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"',
    ),
    Case(
        "maxSkew 0",
        pod({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}]}),
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
    ),
    Case(
        "spread without topologyKey",
        pod({"topologySpreadConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]}),
        "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
    ),
    Case(
        "spread policies misspelled",
        pod(
            {
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "z",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "nodeAffinityPolicy": "Always",
                    }
                ]
            }
        ),
        'nodeAffinityPolicy: Unsupported value: "Always": supported values: "Honor", "Ignore"',
    ),
    Case(
        "spread constraint twice",
        pod(
            {
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"},
                ]
            }
        ),
        'spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{z, DoNotSchedule}"',
    ),
    Case(
        "matchLabelKeys also in the selector",
        pod(
            {
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "z",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "matchLabelKeys": ["app"],
                        "labelSelector": {"matchLabels": {"app": "x"}},
                    }
                ]
            },
            {"name": "p", "labels": {"app": "y"}},
        ),
        'spec.topologySpreadConstraints[0][0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector',
    ),
    # Affinity.
    Case(
        "anti-affinity without topologyKey",
        pod({"affinity": {"podAntiAffinity": {REQ: [{"labelSelector": {"matchLabels": {"a": "b"}}}]}}}),
        f"spec.affinity.podAntiAffinity.{REQ}[0].topologyKey: Required value: can not be empty",
    ),
    Case(
        "affinity weight 0",
        pod({"affinity": {"podAffinity": {PREF: [{"weight": 0, "podAffinityTerm": {"topologyKey": "z"}}]}}}),
        f"spec.affinity.podAffinity.{PREF}[0].weight: Invalid value: 0: must be in the range 1-100",
    ),
    Case(
        "selector operator misspelled",
        pod(
            {
                "affinity": {
                    "podAffinity": {
                        REQ: [
                            {
                                "topologyKey": "z",
                                "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]},
                            }
                        ]
                    }
                }
            }
        ),
        'labelSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
    ),
    Case(
        "In without values",
        pod(
            {
                "affinity": {
                    "podAffinity": {
                        REQ: [
                            {
                                "topologyKey": "z",
                                "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]},
                            }
                        ]
                    }
                }
            }
        ),
        "values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    ),
    Case(
        "no node selector terms",
        pod(_node_affinity([])),
        "nodeSelectorTerms: Required value: must have at least one node selector term",
    ),
    Case("an empty node selector term", pod(_node_affinity([{}])), None),
    Case(
        "node selector operator misspelled",
        pod(_node_affinity([{"matchExpressions": [{"key": "a", "operator": "Near", "values": ["x"]}]}])),
        'matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
    ),
    Case(
        "Gt with two values",
        pod(_node_affinity([{"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1", "2"]}]}])),
        "must be specified single value when `operator` is 'Lt' or 'Gt'",
    ),
    Case(
        "matchFields on labels",
        pod(_node_affinity([{"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["x"]}]}])),
        'matchFields[0].key: Invalid value: "metadata.labels": not a valid field selector key',
    ),
    Case(
        "preferred node affinity weight 101",
        pod({"affinity": {"nodeAffinity": {PREF: [{"weight": 101, "preference": {}}]}}}),
        f"spec.affinity.nodeAffinity.{PREF}[0].weight: Invalid value: 101: must be in the range 1-100",
    ),
    Case("nodeSelector key with a space", pod({"nodeSelector": {"a b": "c"}}), NAME_PART_RULE),
    Case("nodeSelector value with a space", pod({"nodeSelector": {"a": "c d"}}), LABEL_VALUE_RULE),
    # Names and labels.
    Case("label key starting with a dash", pod(meta={"name": "p", "labels": {"-a": "b"}}), NAME_PART_RULE),
    Case("label value too long", pod(meta={"name": "p", "labels": {"a": "x" * 64}}), "must be no more than 63 bytes"),
    Case("pod name with capitals", pod(meta={"name": "P_1"}), SUBDOMAIN_RULE),
    Case(
        "namespace name with capitals",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad_NS"}},
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters",
    ),
    Case("node name with capitals", node(meta={"name": "Node_1"}), SUBDOMAIN_RULE),
    Case("nodeName with capitals", pod({"nodeName": "Bad_Node"}), SUBDOMAIN_RULE),
    Case("schedulerName with a space", pod({"schedulerName": "Bad Name"}), None),
    # Pods: ports, gates, volumes, preemption.
    Case(
        "hostPort out of range",
        pod({"containers": [ctr(ports=[{"containerPort": 80, "hostPort": 70000}])]}),
        "spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
    ),
    Case(
        "protocol in lower case",
        pod({"containers": [ctr(ports=[{"containerPort": 80, "protocol": "tcp"}])]}),
        'spec.containers[0].ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"',
    ),
    Case(
        "hostPort without containerPort",
        pod({"containers": [ctr(ports=[{"hostPort": 80}])]}),
        "spec.containers[0].ports[0].containerPort: Required value",
    ),
    Case("scheduling gate with a space", pod({"schedulingGates": [{"name": "a b"}]}), NAME_PART_RULE),
    Case(
        "scheduling gate twice",
        pod({"schedulingGates": [{"name": "a"}, {"name": "a"}]}),
        'spec.schedulingGates[1]: Duplicate value: "a"',
    ),
    Case(
        "claim without a name",
        pod({"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": ""}}]}),
        "spec.volumes[0].persistentVolumeClaim.claimName: Required value",
    ),
    Case(
        "ephemeral volume without a claim template",
        pod({"volumes": [{"name": "v", "ephemeral": {}}]}),
        "spec.volumes[0].ephemeral.volumeClaimTemplate: Required value",
    ),
    Case(
        "ephemeral volume's claim template with an unknown access mode",
        pod(
            {
                "volumes": [
                    {
                        "name": "v",
                        "ephemeral": {"volumeClaimTemplate": {"spec": {**BASE_PVC, "accessModes": ["Sometimes"]}}},
                    }
                ]
            }
        ),
        'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Unsupported value: "Sometimes"',
    ),
    Case(
        "ephemeral volume with a valid claim template",
        pod(
            {
                "volumes": [
                    {
                        "name": "v",
                        "ephemeral": {"volumeClaimTemplate": {"metadata": {"labels": {"a": "b"}}, "spec": BASE_PVC}},
                    }
                ]
            }
        ),
        None,
    ),
    Case(
        "init container restartPolicy misspelled",
        pod({"initContainers": [ctr(name="i", restartPolicy="Sometimes")]}),
        'spec.initContainers[0].restartPolicy: Unsupported value: "Sometimes"',
    ),
    Case(
        "pod restartPolicy misspelled",
        pod({"restartPolicy": "Sometimes"}),
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ),
    # Priority admission.
    Case(
        "preemptionPolicy misspelled",
        pod({"preemptionPolicy": "Sometimes"}),
        "must not be provided in pod spec",
        ours='spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
    ),
    Case(
        "unknown PriorityClass",
        pod({"priorityClassName": "nope"}),
        'pods "p" is forbidden: no PriorityClass with name nope was found',
    ),
    Case(
        "priority contradicting its class",
        pod({"priorityClassName": "hi", "priority": 5}),
        'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; '
        "priority admission controller computed 100 from the given PriorityClass name",
        context=(pc("hi", value=100),),
    ),
    Case(
        "priority agreeing with its class",
        pod({"priorityClassName": "hi", "priority": 100}),
        None,
        context=(pc("hi", value=100),),
    ),
    Case(
        "preemptionPolicy contradicting its class",
        pod({"priorityClassName": "hi", "preemptionPolicy": "Never"}),
        "the string value of PreemptionPolicy (Never) must not be provided in pod spec; "
        "priority admission controller computed PreemptLowerPriority from the given PriorityClass name",
        context=(pc("hi", value=100),),
    ),
    Case(
        "priority contradicting the global default",
        pod({"priority": 11}),
        "the integer value of priority (11) must not be provided in pod spec; priority admission controller "
        "computed 10 from the given PriorityClass name",
        context=(pc("gd", value=10, globalDefault=True),),
    ),
    Case("a system class", pod({"priorityClassName": "system-node-critical"}), None),
    # PriorityClasses.
    Case(
        "user priority above a billion",
        pc(value=1000000001),
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
    ),
    Case(
        "reserved class name",
        pc("system-foo", value=5),
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: system-foo is not a known system priority class",
    ),
    Case(
        "class preemptionPolicy misspelled",
        pc(value=5, preemptionPolicy="Sometimes"),
        'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
    ),
    Case("class without a value", pc(), None),
    Case("lowest int32 priority", pc(value=-2147483648), None),
    Case(
        "a second global default",
        pc("gd2", value=11, globalDefault=True),
        "PriorityClass gd is already marked as default. Only one default can exist",
        context=(pc("gd", value=10, globalDefault=True),),
    ),
    # Storage.
    Case(
        "access mode misspelled",
        pvc({"accessModes": ["ReadWriteSometimes"], "resources": {"requests": {"storage": "1Gi"}}}),
        'spec.accessModes: Unsupported value: "ReadWriteSometimes"',
    ),
    Case(
        "ReadWriteOncePod with another mode",
        pvc({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}),
        "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
    ),
    Case(
        "negative claim size",
        pvc({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "-1Gi"}}}),
        'spec.resources[storage]: Invalid value: "-1Gi": must be greater than zero',
    ),
    Case(
        "claim of size 0",
        pvc({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}}),
        'spec.resources[storage]: Invalid value: "0": must be greater than zero',
    ),
    Case(
        "volume mode misspelled",
        pvc(dict(BASE_PVC, volumeMode="Raw")),
        'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
    ),
    Case(
        "claim selector operator misspelled",
        pvc(dict(BASE_PVC, selector={"matchExpressions": [{"key": "a", "operator": "Near"}]})),
        'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
    ),
    Case("claim class with a space", pvc(dict(BASE_PVC, storageClassName="Bad Class")), SUBDOMAIN_RULE),
    Case(
        "negative volume capacity",
        pv(dict(BASE_PV, capacity={"storage": "-1"})),
        'spec.capacity[storage]: Invalid value: "-1": must be greater than zero',
    ),
    Case(
        "volume access mode misspelled",
        pv(dict(BASE_PV, accessModes=["X"])),
        'spec.accessModes: Unsupported value: "X"',
    ),
    Case(
        "volume without node selector terms",
        pv(dict(BASE_PV, nodeAffinity={"required": {"nodeSelectorTerms": []}})),
        "spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term",
    ),
    Case(
        "volume node affinity without required",
        pv(dict(BASE_PV, nodeAffinity={})),
        "spec.nodeAffinity.required: Required value: must specify required node constraints",
    ),
    Case(
        "reclaim policy misspelled",
        pv(dict(BASE_PV, persistentVolumeReclaimPolicy="Keep")),
        'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep"',
    ),
    Case(
        "volumeBindingMode misspelled",
        sc(provisioner="x", volumeBindingMode="Later"),
        'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
    ),
    Case(
        "class reclaimPolicy misspelled",
        sc(provisioner="x", reclaimPolicy="Keep"),
        'reclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Retain"',
    ),
    Case(
        "allowed topology without values",
        sc(provisioner="x", allowedTopologies=[{"matchLabelExpressions": [{"key": "z", "values": []}]}]),
        "allowedTopologies[0].matchLabelExpressions[0].values: Required value",
    ),
    Case(
        "negative CSI attach limit",
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "n"},
            "spec": {"drivers": [{"name": "d.example.com", "nodeID": "n", "allocatable": {"count": -1}}]},
        },
        "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0",
    ),
    Case(
        "negative storage capacity",
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIStorageCapacity",
            "metadata": {"name": "c"},
            "storageClassName": "s",
            "capacity": "-1",
        },
        'capacity: Invalid value: "-1": must be greater than or equal to 0',
    ),
    Case(
        "PDB selector operator misspelled",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "b"},
            "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}},
        },
        'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
    ),
    Case(
        "Service selector key with a space",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s"},
            "spec": {"selector": {"a b": "c"}, "ports": [{"port": 80}]},
        },
        NAME_PART_RULE,
    ),
    # Workloads: what the API server checks of what their controllers read.
    Case("Deployment taken", workload("Deployment", replicated(replicas=3)), None),
    Case("ReplicaSet taken", workload("ReplicaSet", replicated()), None),
    Case(
        "ReplicationController selector from template", workload("ReplicationController", {"template": TEMPLATE}), None
    ),
    Case("StatefulSet taken", workload("StatefulSet", replicated(podManagementPolicy="Parallel")), None),
    Case("DaemonSet taken", workload("DaemonSet", replicated()), None),
    Case("Job taken", workload("Job", {"parallelism": 3, "template": JOB_TEMPLATE}), None),
    Case("CronJob taken", workload("CronJob", cron()), None),
    Case("CronJob @every taken", workload("CronJob", cron(schedule="@every 1h")), None),
    Case("CronJob that never fires taken", workload("CronJob", cron(schedule="0 0 30 2 *")), None),
    Case(
        "Deployment pods name an unknown PriorityClass: taken (the ReplicaSet's pods are refused later)",
        workload(
            "Deployment",
            replicated(template={**TEMPLATE, "spec": {**TEMPLATE["spec"], "priorityClassName": "nope"}}),
        ),
        None,
    ),
    Case(
        "Deployment without selector",
        workload("Deployment", {"template": TEMPLATE}),
        '[spec.selector: Required value, spec.template.metadata.labels: Invalid value: {"app":"x"}: '
        "`selector` does not match template `labels`]",
    ),
    Case(
        "Deployment with an empty selector",
        workload("Deployment", replicated(selector={})),
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment",
    ),
    Case(
        "Deployment negative replicas",
        workload("Deployment", replicated(replicas=-1)),
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
    ),
    Case(
        "Deployment selector misses the template labels",
        workload("Deployment", replicated(selector={"matchLabels": {"app": "y"}})),
        'spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`',
    ),
    Case(
        "Deployment template with a bad quantity",
        workload(
            "Deployment",
            replicated(template={**TEMPLATE, "spec": {"containers": [ctr({"requests": {"cpu": "2x"}})]}}),
        ),
        "quantities must match the regular expression",
    ),
    Case(
        "Deployment template with a misspelled toleration effect",
        workload(
            "Deployment",
            replicated(template={**TEMPLATE, "spec": {**TEMPLATE["spec"], "tolerations": [{"effect": "NoSchedul"}]}}),
        ),
        'spec.template.spec.tolerations[0].effect: Unsupported value: "NoSchedul"',
    ),
    Case(
        "Deployment template restartPolicy Never",
        workload(
            "Deployment", replicated(template={**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}})
        ),
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ),
    Case(
        "ReplicaSet with an empty selector",
        workload("ReplicaSet", replicated(selector={})),
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment",
    ),
    Case(
        "StatefulSet podManagementPolicy misspelled",
        workload("StatefulSet", replicated(podManagementPolicy="Fast")),
        "spec.podManagementPolicy: Invalid value: \"Fast\": must be 'OrderedReady' or 'Parallel'",
    ),
    Case(
        "StatefulSet negative start ordinal",
        workload("StatefulSet", replicated(ordinals={"start": -1})),
        "spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0",
    ),
    Case(
        "DaemonSet with an empty selector",
        workload("DaemonSet", replicated(selector={})),
        "spec.selector: Invalid value: {}: empty selector is invalid for daemonset",
    ),
    Case(
        "Job negative parallelism",
        workload("Job", {"parallelism": -1, "template": JOB_TEMPLATE}),
        "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
    ),
    Case(
        "Job completion mode misspelled",
        workload("Job", {"completionMode": "Sometimes", "template": JOB_TEMPLATE}),
        'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"',
    ),
    Case(
        "Indexed Job without completions",
        workload("Job", {"completionMode": "Indexed", "parallelism": 2, "template": JOB_TEMPLATE}),
        "spec.completions: Required value: when completion mode is Indexed",
    ),
    Case(
        "Job template restartPolicy Always",
        workload("Job", {"template": {"spec": {**JOB_TEMPLATE["spec"], "restartPolicy": "Always"}}}),
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ),
    Case(
        "CronJob minute out of range",
        workload("CronJob", cron(schedule="61 * * * *")),
        'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
    ),
    Case(
        "CronJob schedule with four fields",
        workload("CronJob", cron(schedule="* * * *")),
        'spec.schedule: Invalid value: "* * * *": expected exactly 5 fields, found 4: [* * * *]',
    ),
    Case(
        "CronJob unknown time zone",
        workload("CronJob", cron(timeZone="Mars/Olympus")),
        'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
    ),
    Case(
        "CronJob time zone in the schedule",
        workload("CronJob", cron(schedule="TZ=UTC 0 * * * *")),
        "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
    ),
    Case(
        "CronJob concurrency policy misspelled",
        workload("CronJob", cron(concurrencyPolicy="Never")),
        'spec.concurrencyPolicy: Unsupported value: "Never": supported values: "Allow", "Forbid", "Replace"',
    ),
]


# resource.k8s.io/v1 (DRA): verdicts probed on kube-apiserver v1.36 with dry-run creates.

RESOURCE = "resource.k8s.io/v1"
DEVICE: Obj = {"name": "gpu-0", "attributes": {"model": {"string": "a100"}}, "capacity": {"memory": {"value": "40Gi"}}}


def rslice(devices: list[Obj] | None = None, **spec: Any) -> Obj:
    s: Obj = {"driver": "gpu.example.com", "pool": {"name": "node-a", "resourceSliceCount": 1}, "nodeName": "node-a"}
    s.update(spec)
    if devices is not None:
        s["devices"] = devices
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": "s1"}, "spec": s}


def rclaim(requests: list[Obj], **devices: Any) -> Obj:
    spec = {"devices": {"requests": requests, **devices}}
    return {"apiVersion": RESOURCE, "kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": spec}


def dclass(**spec: Any) -> Obj:
    return {"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": spec}


def exact(name: str = "gpu", **fields: Any) -> Obj:
    return {"name": name, "exactly": {"deviceClassName": "gpu", **fields}}


DRA_CASES: list[Case] = [
    Case("ResourceSlice valid", rslice([DEVICE]), None),
    Case(
        "ResourceSlice without node selection or slice count",
        rslice(pool={"name": "node-a"}, nodeName=None),
        "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
    ),
    Case(
        "ResourceSlice with two node selections",
        rslice(allNodes=True),
        'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
        "`perDeviceNodeSelection` is required, but multiple fields are set",
    ),
    Case(
        "ResourceSlice attribute with two values",
        rslice([{"name": "gpu-0", "attributes": {"model": {"string": "a100", "int": 1}}}]),
        'spec.devices[0].attributes[model]: Invalid value: {"IntValue":1,"BoolValue":null,"StringValue":"a100",'
        '"VersionValue":null,"IntValues":null,"BoolValues":null,"StringValues":null,"VersionValues":null}: '
        "exactly one value must be specified",
    ),
    Case(
        "ResourceSlice attribute name not a C identifier",
        rslice([{"name": "gpu-0", "attributes": {"bad-name": {"bool": True}}}]),
        'spec.devices[0].attributes: Invalid value: "bad-name": a valid C identifier must start with alphabetic '
        "character or '_'",
    ),
    Case(
        "ResourceSlice version not semver",
        rslice([{"name": "gpu-0", "attributes": {"v": {"version": "1.2"}}}]),
        'spec.devices[0].attributes[v].version: Invalid value: "1.2": must be a string compatible with semver.org '
        "spec 2.0.0",
    ),
    Case(
        "ResourceSlice duplicate device",
        rslice([DEVICE, DEVICE]),
        'spec.devices[1]: Duplicate value: "gpu-0"',
    ),
    Case(
        "ResourceSlice shared counters beside devices",
        rslice([DEVICE], sharedCounters=[{"name": "c", "counters": {"memory": {"value": "1Gi"}}}]),
        'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed',
    ),
    Case(
        "ResourceSlice taint effect misspelled",
        rslice([{"name": "gpu-0", "taints": [{"key": "a", "effect": "Bad"}]}]),
        'spec.devices[0].taints[0].effect: Unsupported value: "Bad": supported values: "NoExecute", "NoSchedule", '
        '"None"',
    ),
    Case(
        "ResourceSlice device node without per-device selection",
        rslice([{"name": "gpu-0", "nodeName": "x"}]),
        "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
    ),
    Case(
        "ResourceSlice binding conditions without failure conditions",
        rslice([{"name": "gpu-0", "bindingConditions": ["a"]}]),
        "spec.devices[0].bindingFailureConditions: Invalid value: null: bindingFailureConditions are required to use "
        "bindingConditions",
    ),
    Case(
        "ResourceSlice request policy on a single-allocation device",
        rslice([{"name": "gpu-0", "capacity": {"memory": {"value": "1Gi", "requestPolicy": {"default": "1Gi"}}}}]),
        "spec.devices[0].capacity[memory].requestPolicy: Forbidden: allowMultipleAllocations must be true",
    ),
    Case(
        "ResourceSlice slice count as a string",
        rslice(pool={"name": "node-a", "resourceSliceCount": "1"}),
        "json: cannot unmarshal string into Go struct field ResourcePool.spec.pool.resourceSliceCount of type int64",
    ),
    Case("ResourceClaim valid", rclaim([exact()]), None),
    Case(
        "ResourceClaim request without exactly or firstAvailable",
        rclaim([{"name": "gpu"}]),
        "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
    ),
    Case(
        "ResourceClaim allocation mode misspelled",
        rclaim([exact(allocationMode="Some")]),
        'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", '
        '"ExactCount"',
    ),
    Case(
        "ResourceClaim negative count",
        rclaim([exact(count=-1)]),
        "spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero",
    ),
    Case(
        "ResourceClaim duplicate subrequest",
        rclaim([{"name": "fa", "firstAvailable": [{"name": "x", "deviceClassName": "g"}] * 2}]),
        'spec.devices.requests[0].firstAvailable[1]: Duplicate value: "x"',
    ),
    Case(
        "ResourceClaim constraint names an unknown request",
        rclaim([exact()], constraints=[{"requests": ["nope"], "matchAttribute": "gpu.example.com/model"}]),
        'spec.devices.constraints[0].requests[0]: Invalid value: "nope": must be the name of a request in the claim '
        "or the name of a request and a subrequest separated by '/'",
    ),
    Case(
        "ResourceClaim matchAttribute without a domain",
        rclaim([exact()], constraints=[{"matchAttribute": "model"}]),
        'spec.devices.constraints[0].matchAttribute: Invalid value: "model": a fully qualified name must be a domain '
        "and a name separated by a slash",
    ),
    Case(
        "ResourceClaim admin access outside an admin namespace",
        rclaim([exact(adminAccess=True)]),
        "spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the "
        "`resource.kubernetes.io/admin-access: true` label on the containing namespace",
    ),
    Case(
        "ResourceClaim nested selector within the cost limit",
        rclaim(
            [
                exact(
                    selectors=[
                        {
                            "cel": {
                                "expression": "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
                                ".all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
                                ".all(z2, z2 < x + y + z))))"
                            }
                        }
                    ]
                )
            ]
        ),
        None,
    ),
    Case(
        "ResourceClaimTemplate names its claims",
        {
            "apiVersion": RESOURCE,
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t"},
            "spec": {"metadata": {"name": "x"}, "spec": {"devices": {"requests": [exact()]}}},
        },
        "spec.metadata.name: Forbidden: cannot be set",
    ),
    Case("DeviceClass valid", dclass(selectors=[{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]), None),
    Case("DeviceClass selector without cel", dclass(selectors=[{}]), "spec.selectors[0].cel: Required value"),
    Case(
        "DeviceClass selector of the wrong type",
        dclass(selectors=[{"cel": {"expression": "device.driver"}}]),
        'spec.selectors[0].cel.expression: Invalid value: "device.driver": must evaluate to bool or the unknown '
        "type, not string",
    ),
    Case(
        "DeviceClass selector 249 parentheses deep",
        dclass(selectors=[{"cel": {"expression": "(" * 249 + "true" + ")" * 249}}]),
        None,
    ),
    Case(
        "DeviceClass selector 1,000 parentheses deep",
        dclass(selectors=[{"cel": {"expression": "(" * 1000 + "true" + ")" * 1000}}]),
        "compilation failed: ERROR: <input>:-1:0: expression recursion limit exceeded: 250",
    ),
    Case(
        "DeviceClass selector with 250 chained calls",
        dclass(selectors=[{"cel": {"expression": "'a'" + ".lowerAscii()" * 250 + " == 'a'"}}]),
        "compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded",
    ),
    Case(
        "DeviceClass selector of 1,000 conjunctions",
        dclass(selectors=[{"cel": {"expression": "true" + " && true" * 1000}}]),
        None,
    ),
    Case(
        "DeviceClass selector of 3,000 negations",
        dclass(selectors=[{"cel": {"expression": "!" * 3000 + "true"}}]),
        None,
    ),
    Case(
        "DeviceClass selector of 10,249 bytes in 5,134 characters",
        dclass(selectors=[{"cel": {"expression": "device.driver == '" + "\u00e9" * 5115 + "'"}}]),
        "spec.selectors[0].cel.expression: Too long: may not be more than 10240 bytes",
    ),
    Case(
        "DeviceClass selector with a pattern RE2 refuses",
        dclass(selectors=[{"cel": {"expression": "device.driver.find('[') == ''"}}]),
        "spec.selectors[0].cel.expression: Internal error: program instantiation failed: error parsing regexp: ",
    ),
    Case(
        "ResourceClaim selector 250 parentheses deep",
        rclaim([exact(selectors=[{"cel": {"expression": "(" * 250 + "true" + ")" * 250}}])]),
        "spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: ",
    ),
    Case(
        "DeviceClass extended resource name not extended",
        dclass(extendedResourceName="cpu"),
        'spec.extendedResourceName: Invalid value: "cpu": must be a valid extended resource name',
    ),
    Case(
        "Pod claim entry without a source",
        pod({"resourceClaims": [{"name": "gpu"}]}),
        'spec.resourceClaims[0]: Invalid value: {"Name":"gpu","ResourceClaimName":null,'
        '"ResourceClaimTemplateName":null}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`',
    ),
    Case(
        "Pod container claims an unknown entry",
        pod(
            {
                "containers": [ctr({"claims": [{"name": "x"}]})],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}],
            }
        ),
        'spec.containers[0].resources.claims[0]: Not found: "x": must be one of the names in '
        "pod.spec.resourceClaims: gpu",
    ),
]
CASES += DRA_CASES
