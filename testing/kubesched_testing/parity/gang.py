"""The `gang` parity family: seeded PodGroups placed by real kube-scheduler v1.36 and by kubesched.

Both schedulers run with GenericWorkload, GangScheduling, TopologyAwareWorkloadScheduling,
WorkloadAwarePreemption and DRAWorkloadResourceClaims on (the API server with
scheduling.k8s.io/v1alpha2 served). Each case is a cluster of
nodes labelled by zone, rack and host, all of different sizes (so that node scores rarely
tie and the schedulers' random tie-breaks rarely matter), and one to three gangs of 2-16
identical pods with a minCount (sometimes above the group's size, which keeps it waiting)
and sometimes a topology constraint on zone or rack. A group's pods are created first and
wait for their PodGroup; the PodGroup is then created and the group settles before the
next, on both sides (kubesched: a Scenario step per group, a minute apart). In about half
the seeds some gangs share a ResourceClaim of their own (DRAWorkloadResourceClaims): the
PodGroup lists it in spec.resourceClaims and every member names it alike, on a DeviceClass
whose one or two devices are reachable from every node (a ResourceSlice with allNodes), so
that a gang past the devices cannot allocate its claim and waits. Devices on every node
keep the comparison fair: v1.36 does not hold a member reusing a pending allocation to the
allocation's node selector, and which member's PreBind writes the allocation is a race of
goroutines upstream, so with node-local devices where the members end up would be chance.

A group's members are identical and upstream orders them by map iteration, so which member
lands where is not compared: a decision is one pod of one group, and the family compares
per group the nodes its bound pods took (as a multiset) and the verdicts of the others
(messages, with the pod's own name taken out). A group whose placement had a tie upstream
could break either way (two topology domains both fit it whole) is counted as not compared.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.kube.api import APIError, KubeAPI, load_configuration
from kubesched_testing.controlplane import ControlPlane, reset_cluster
from kubesched_testing.parity.compare import FamilyReport, Mismatch
from kubesched_testing.parity.upstream import Attempt, Decision

GATES = (
    "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true,WorkloadAwarePreemption=true,"
    "DRAWorkloadResourceClaims=true"
)
APISERVER_ARGS = ("--runtime-config=scheduling.k8s.io/v1alpha2=true", f"--feature-gates={GATES}")
CONFIG: dict[str, Any] = {"podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 1}
ZONE, RACK, HOST = "topology.kubernetes.io/zone", "example.com/rack", "kubernetes.io/hostname"
STEP_SECONDS = 60
SETTLE_SECONDS = 3.0
Obj = dict[str, Any]


@dataclass
class Group:
    pod_group: Obj
    pods: list[Obj]
    min_count: int
    topology: str | None


@dataclass
class GangCase:
    seed: int
    nodes: list[Obj]
    groups: list[Group] = field(default_factory=list)
    classes: list[Obj] = field(default_factory=list)  # PriorityClasses
    fillers: list[Obj] = field(default_factory=list)  # bound low-priority pods a high-priority gang may preempt
    devices: list[Obj] = field(default_factory=list)  # a DeviceClass, its ResourceSlice and the gangs' claims


def _node(name: str, zone: str, rack: str, cpu_m: int, mem_gi: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {ZONE: zone, RACK: rack, HOST: name}},
        "status": {
            "capacity": {"cpu": f"{cpu_m}m", "memory": f"{mem_gi}Gi", "pods": "110"},
            "allocatable": {"cpu": f"{cpu_m}m", "memory": f"{mem_gi}Gi", "pods": "110"},
        },
    }


def generate(seed: int) -> GangCase:
    rng = random.Random(f"kubesched-gang/{seed}")
    names: list[tuple[str, str, str]] = []
    for z in range(rng.randint(2, 3)):
        for r in range(rng.randint(1, 2)):
            for h in range(rng.randint(1, 3)):
                names.append((f"node-{z}{r}{h}", f"zone-{z}", f"rack-{z}{r}"))
    cpus = rng.sample(range(3000, 24000, 250), len(names))
    mems = rng.sample(range(8, 96), len(names))
    case = GangCase(seed, [_node(n, z, r, c, m) for (n, z, r), c, m in zip(names, cpus, mems, strict=True)])
    for g in range(rng.randint(1, 3)):
        size = rng.randint(2, 16)
        min_count = rng.choice([size, size, size, rng.randint(1, size), rng.randint(1, size), size + 1])
        topology = rng.choice([None, None, ZONE, RACK])
        cpu = rng.choice([250, 500, 1000, 1500, 2000, 3000])
        mem = rng.choice([1, 2, 4])
        name = f"s{seed}-gang-{g}"
        spec: Obj = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
        if topology:
            spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
        pod_group = {
            "apiVersion": "scheduling.k8s.io/v1alpha2",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
        pods = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{name}-{i}", "namespace": "default"},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "schedulingGroup": {"podGroupName": name},
                    "containers": [
                        {"name": "c", "image": "i", "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Gi"}}}
                    ],
                },
            }
            for i in range(size)
        ]
        case.groups.append(Group(pod_group, pods, min_count, topology))
    _shared_claims(case, random.Random(f"kubesched-gang-claims/{seed}"))
    _preemption(case, cpus, random.Random(f"kubesched-gang-preemption/{seed}"))
    return case


def _shared_claims(case: GangCase, rng: random.Random) -> None:
    """One seed in two: a DeviceClass with one or two devices reachable from every node, and a ResourceClaim per
    chosen gang that its PodGroup and all its members share (DRAWorkloadResourceClaims)."""
    if rng.random() >= 0.5:
        return
    driver, klass = f"s{case.seed}.fabric.example.com", f"s{case.seed}-fabric"
    count = rng.randint(1, 2)
    case.devices = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": klass},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": klass},
            "spec": {
                "driver": driver,
                "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                "allNodes": True,
                "devices": [{"name": f"link-{i}"} for i in range(count)],
            },
        },
    ]
    chosen = [g for g in case.groups if rng.random() < 0.7] or case.groups[:1]
    for group in chosen:
        name = f"{group.pod_group['metadata']['name']}-fabric"
        case.devices.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "link", "exactly": {"deviceClassName": klass}}]}},
            }
        )
        entry = {"name": "fabric", "resourceClaimName": name}
        group.pod_group["spec"]["resourceClaims"] = [dict(entry)]
        for p in group.pods:
            p["spec"]["resourceClaims"] = [dict(entry)]
            p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "fabric"}]


def _priority_class(name: str, value: int) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def _preemption(case: GangCase, cpus: list[int], rng: random.Random) -> None:
    """One seed in three: nodes partly filled by bound pods of distinct low priorities, and a last gang of
    higher priority that fits only by preempting some of them as a whole (WorkloadAwarePreemption)."""
    if rng.random() >= 1 / 3:
        return
    case.classes = [_priority_class("gang-high", 1000)]
    for group in case.groups:  # the gangs before are no victims: theirs would tie, broken by a Go map's order
        group.pod_group["spec"]["priorityClassName"] = "gang-high"
        for p in group.pods:
            p["spec"]["priorityClassName"] = "gang-high"
    for i, (node, cpu) in enumerate(zip(case.nodes, cpus, strict=True)):
        if rng.random() < 0.3:
            continue
        klass = f"gang-low-{i}"
        case.classes.append(_priority_class(klass, i + 1))  # distinct: upstream's victims tie in a map's order
        request = cpu * rng.randint(40, 70) // 100
        case.fillers.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"s{case.seed}-filler-{i}", "namespace": "default"},
                "spec": {
                    "nodeName": node["metadata"]["name"],
                    "priorityClassName": klass,
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": f"{request}m"}}}],
                },
            }
        )
    size = rng.randint(2, 8)
    cpu = rng.choice([3000, 4000, 6000])
    name = f"s{case.seed}-gang-hi"
    pod_group = {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"priorityClassName": "gang-high", "schedulingPolicy": {"gang": {"minCount": size}}},
    }
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{name}-{i}", "namespace": "default"},
            "spec": {
                "terminationGracePeriodSeconds": 0,
                "priorityClassName": "gang-high",
                "schedulingGroup": {"podGroupName": name},
                "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": f"{cpu}m"}}}],
            },
        }
        for i in range(size)
    ]
    case.groups.append(Group(pod_group, pods, size, None))


Verdicts = dict[str, tuple[str | None, str]]  # pod name -> (node or None, message)


def _normalise(message: str, pod: str) -> str:
    return message.replace(f'"{pod}"', '"<pod>"')


def run_upstream(cp: ControlPlane, case: GangCase) -> Verdicts:
    """The case on the real control plane: nodes, then each group's pods, its PodGroup, and a wait to settle."""
    api = KubeAPI(load_configuration(str(cp.kubeconfig_path)), qps=0, retries=5)
    reset_cluster(api)
    groups = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups"
    for pg in api.request("GET", groups).get("items") or ():
        path = f"{groups}/{pg['metadata']['name']}"
        # No controller runs here to lift the protection finalizer once the group's pods are gone.
        api.request("PATCH", path, body={"metadata": {"finalizers": None}}, content_type="application/merge-patch+json")
        if not pg["metadata"].get("deletionTimestamp"):
            api.request("DELETE", path)
    proc = cp.start_scheduler(dict(CONFIG), name=f"sched-gang-{case.seed}", args=(f"--feature-gates={GATES}",))
    try:
        time.sleep(2.0)
        for n in sorted(case.nodes, key=lambda o: o["metadata"]["name"]):
            api.request("POST", "/api/v1/nodes", body=n)
        for obj in case.devices:
            namespaced = obj["kind"] == "ResourceClaim"
            plural = {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices"}.get(
                obj["kind"], "resourceclaims"
            )
            where = "namespaces/default/" if namespaced else ""
            api.request("POST", f"/apis/resource.k8s.io/v1/{where}{plural}", body=obj)
        for klass in case.classes:
            try:
                api.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body=klass)
            except APIError as err:
                if err.status != 409:  # kept from an earlier seed: the same class
                    raise
        for filler in case.fillers:
            api.request("POST", "/api/v1/namespaces/default/pods", body=filler)
        time.sleep(1.0 if case.fillers else 0.0)  # the scheduler's cache holds them before any gang arrives
        for group in case.groups:
            for p in group.pods:
                api.request("POST", "/api/v1/namespaces/default/pods", body=p)
            time.sleep(0.5)
            api.request("POST", "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups", body=group.pod_group)
            _settle(api, [p["metadata"]["name"] for p in group.pods])
        time.sleep(SETTLE_SECONDS)
        out: Verdicts = {}
        for p in api.request("GET", "/api/v1/namespaces/default/pods").get("items") or ():
            name = p["metadata"]["name"]
            cond: Obj = next(
                (c for c in (p.get("status") or {}).get("conditions") or () if c.get("type") == "PodScheduled"), {}
            )
            node = (p.get("spec") or {}).get("nodeName") or None
            message = "" if node else (cond.get("message") or "<waiting>")
            out[name] = (node, _normalise(message, name))
        return out
    finally:
        proc.stop()
        cp.schedulers.remove(proc)


def _settle(api: KubeAPI, names: list[str], timeout: float = 20.0) -> None:
    """Until every pod of the group is bound or told why not (a gang short of minCount is told nothing)."""
    deadline = time.monotonic() + timeout
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        pods = {
            p["metadata"]["name"]: p
            for p in api.request("GET", "/api/v1/namespaces/default/pods").get("items") or ()
            if p["metadata"]["name"] in names
        }
        done = all(
            (p.get("spec") or {}).get("nodeName")
            or any(
                # A SchedulerError (a member that lost the race to write a shared claim's allocation in PreBind)
                # is retried after the backoff: not settled yet.
                c.get("type") == "PodScheduled" and c.get("reason") != "SchedulerError"
                for c in (p.get("status") or {}).get("conditions") or ()
            )
            for p in pods.values()
        )
        if done and len(pods) == len(names):
            return
        if time.monotonic() - quiet_since > 4.0 and not any(
            (p.get("spec") or {}).get("nodeName") for p in pods.values()
        ):
            return  # nobody placed and nobody told: the gang waits in PreEnqueue
        time.sleep(0.2)


@contextlib.contextmanager
def _ties_as_upstream(chosen: dict[str, Counter[str]]) -> Iterator[set[str]]:
    """Nodes tied for the top score go the way upstream went where it can: among the tied nodes, one that
    upstream gave the pod's group and that holds fewer of its members yet than upstream put there (a random
    draw otherwise, as before). Yields the groups for which some tie was not settled so."""
    import numpy as np

    from kubesched import schedule_one, schedule_one_podgroup
    from kubesched.cache.pod_groups import pod_group_name

    unsettled: set[str] = set()
    current: list[Any] = [None]
    original_pod, original_select = schedule_one_podgroup.schedule_pod, schedule_one.select_host

    def schedule_pod(sched: Any, fwk: Any, state: Any, pod: Any, record: Any) -> Any:
        current[0] = pod
        try:
            return original_pod(sched, fwk, state, pod, record)
        finally:
            current[0] = None

    def select_host(sched: Any, nodes: Any, totals: Any) -> str:
        best = [nodes[int(i)].name for i in np.flatnonzero(totals == totals.max())]
        pod = current[0]
        group = pod_group_name(pod.obj) if pod is not None else None
        if len(best) == 1 or group is None:
            return str(original_select(sched, nodes, totals))
        members = sched.cache.pod_groups.get(pod.namespace, group) if sched.cache.pod_groups is not None else None
        held = Counter(p.node_name for p in members.scheduled_pods()) if members is not None else Counter()
        wanted = chosen.get(group, Counter())
        for name in best:
            if wanted[name] > held[name]:
                return str(name)
        unsettled.add(group)
        return str(original_select(sched, nodes, totals))

    cycle = schedule_one_podgroup.PodGroupCycle
    original_best = cycle._best_placement

    def best_placement(self: Any, fwk: Any, state: Any, namespace: str, name: str, passed: Any) -> Any:
        """Placements tied on score: the one holding the nodes upstream gave the group wins the draw."""
        want = set(chosen.get(name, Counter()))
        preferred = next((i for i, (pl, _) in enumerate(passed) if want & {ni.name for ni in pl.nodes}), None)
        if preferred is None:
            unsettled.add(name)
            return original_best(self, fwk, state, namespace, name, passed)
        rng = self.cycles.rng
        draws = iter([2**62 if i == preferred else 0 for i in range(len(passed))])
        rng.getrandbits = lambda _bits: next(draws)
        try:
            return original_best(self, fwk, state, namespace, name, passed)
        finally:
            del rng.getrandbits

    schedule_one_podgroup.schedule_pod, schedule_one.select_host = schedule_pod, select_host
    cycle._best_placement = best_placement  # type: ignore[method-assign]
    try:
        yield unsettled
    finally:
        schedule_one_podgroup.schedule_pod, schedule_one.select_host = original_pod, original_select
        cycle._best_placement = original_best  # type: ignore[method-assign]


def run_ours(case: GangCase, up: Verdicts | None = None) -> tuple[Verdicts, set[str]]:
    """The same case through `kubesched.simulate`: each PodGroup a Scenario step, a minute after the last.
    With `up`, nodes tied for the top score are settled as upstream settled them where they can be
    (`_ties_as_upstream`). Also the groups for which a tie was left to chance."""
    from kubesched.simulator.api import simulate

    steps = [{"at": f"{(i + 1) * STEP_SECONDS}s", "create": [g.pod_group]} for i, g in enumerate(case.groups)]
    scenario = {
        "apiVersion": "kubesched.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "gangs"},
        "steps": steps,
    }
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **CONFIG}
    pods = [p for g in case.groups for p in g.pods]
    chosen: dict[str, Counter[str]] = {}
    for name, (node, _) in (up or {}).items():
        if node:
            chosen.setdefault(name.rsplit("-", 1)[0], Counter())[node] += 1
    with _ties_as_upstream(chosen) as unsettled:
        sim = simulate(
            *case.classes,
            *case.nodes,
            *case.devices,
            *case.fillers,
            *pods,
            scenario,
            config=config,
            feature_gates=GATES,
            seed=case.seed,
            record=False,
        )
    out: Verdicts = {}
    for p in sim.pods:
        message = "" if p.node else ("<waiting>" if p.result == "Gated" else p.message)
        out[p.name] = (p.node, _normalise(message, p.name))
    preempted = {e.pod.partition("/")[2] for e in sim.events if e.type == "Preempted"}
    for f in case.fillers:
        if f["metadata"]["name"] not in preempted:
            out[f["metadata"]["name"]] = (f["spec"]["nodeName"], "")
    return out, set(unsettled)


def compare_case(
    case: GangCase, up: Verdicts, ours: Verdicts, tied: frozenset[str] | set[str] = frozenset()
) -> tuple[int, int, int, list[tuple[str, list[str]]]]:
    """(decisions compared, exact, not compared, [(group, details)]) for one case: per group, the nodes its
    bound pods took and the verdicts of the others, as multisets.

    A topology group both sides placed whole-ly, as many pods each, in different domains had a
    tie: both domains fit that many (the cluster was the same before it), PodGroupPodsCount scored
    them alike and each scheduler drew its own random winner. So had a group placed on other nodes
    one of whose members found nodes tied for the top score (`tied`). Such a group and the groups
    after it (placed on clusters that now differ) are not compared. Nor are the verdicts of a topology
    group placed nowhere when its key has several domains: upstream reports the trial of the first
    placement, and its placements come out of a Go map in random order.
    """
    decisions = exact = ambiguous = 0
    problems: list[tuple[str, list[str]]] = []
    diverged = False
    for group in case.groups:
        names = [p["metadata"]["name"] for p in group.pods]
        if diverged:
            ambiguous += len(names)
            continue
        up_nodes = Counter(str(up[n][0]) for n in names if n in up and up[n][0])
        our_nodes = Counter(str(ours[n][0]) for n in names if n in ours and ours[n][0])
        up_msgs = Counter(up[n][1] for n in names if n in up and not up[n][0])
        our_msgs = Counter(ours[n][1] for n in names if n in ours and not ours[n][0])
        name = group.pod_group["metadata"]["name"]
        tie = name in tied and sum(up_nodes.values()) == sum(our_nodes.values())
        if (
            group.topology
            and not up_nodes
            and not our_nodes
            and up_msgs != our_msgs
            and _domains(case, group.topology) > 1
        ):
            # Placed nowhere: upstream reports the trial of its first placement, first in a Go map's order.
            ambiguous += len(names)
            continue
        domain_tie = name in tied and group.topology and _tied(case, group.topology, up_nodes, our_nodes)
        if up_nodes != our_nodes and (tie or domain_tie):
            ambiguous += len(names)
            diverged = True
            continue
        decisions += len(names)
        details = []
        if up_nodes != our_nodes:
            details.append(
                f"nodes: upstream {dict(sorted(up_nodes.items()))}, kubesched {dict(sorted(our_nodes.items()))}"
            )
        if up_msgs != our_msgs:
            details.append(f"verdicts:\n    upstream:  {dict(up_msgs)}\n    kubesched: {dict(our_msgs)}")
        if details:
            problems.append((group.pod_group["metadata"]["name"], details))
            wrong = sum((up_nodes - our_nodes).values()) + sum((up_msgs - our_msgs).values())
            exact += len(names) - max(wrong, 1)
            diverged = True
        else:
            exact += len(names)
    if case.fillers and not diverged:
        names = [f["metadata"]["name"] for f in case.fillers]
        decisions += len(names)
        up_kept, our_kept = {n for n in names if n in up}, {n for n in names if n in ours}
        if up_kept != our_kept:
            detail = f"victims: upstream {sorted(set(names) - up_kept)}, kubesched {sorted(set(names) - our_kept)}"
            problems.append(("preemption victims", [detail]))
            exact += len(names) - len(up_kept ^ our_kept)
        else:
            exact += len(names)
    elif case.fillers:
        ambiguous += len(case.fillers)
    return decisions, exact, ambiguous, problems


def _domains(case: GangCase, key: str) -> int:
    return len({n["metadata"]["labels"][key] for n in case.nodes})


def _tied(case: GangCase, key: str, up_nodes: Counter[str], our_nodes: Counter[str]) -> bool:
    """Both placed the same number of pods, each side within one domain of `key`, the domains different."""
    labels = {n["metadata"]["name"]: n["metadata"]["labels"][key] for n in case.nodes}
    up_domains = {labels[n] for n in up_nodes}
    our_domains = {labels[n] for n in our_nodes}
    return (
        sum(up_nodes.values()) == sum(our_nodes.values()) > 0
        and len(up_domains) == len(our_domains) == 1
        and up_domains != our_domains
    )


def run_gang_family(cp: ControlPlane | None, seeds: list[int], progress: Any = lambda _: None) -> FamilyReport:
    """The family on its own control plane (the alpha API served), as bench/parity.py reports families."""
    del cp  # the shared control plane serves no alpha API
    from kubesched_testing.controlplane import control_plane

    report = FamilyReport("gang")
    with control_plane(extra_apiserver_args=list(APISERVER_ARGS)) as gang_cp:
        for seed in seeds:
            case = generate(seed)
            started = time.monotonic()
            up = run_upstream(gang_cp, case)
            ours, tied = run_ours(case, up)
            decisions, exact, ambiguous, problems = compare_case(case, up, ours, tied)
            report.decisions += decisions
            report.exact += exact
            report.ambiguous += ambiguous
            victims = sum(1 for f in case.fillers if f["metadata"]["name"] not in up)
            shared = sum(1 for g in case.groups if g.pod_group["spec"].get("resourceClaims"))
            notes = (("gangs", len(case.groups)), ("gangs sharing a claim", shared))
            for note, n in (*notes, ("preemption victims (upstream)", victims)):
                report.notes[note] = report.notes.get(note, 0) + n
            for group, details in problems:
                report.by_kind["result"] = report.by_kind.get("result", 0) + 1
                decision = Decision("gang", seed, f"default/{group}", "group", [], Attempt(f"default/{group}"))
                report.mismatches.append(Mismatch(decision, None, ["result"], details))
            took = time.monotonic() - started
            progress(f"gang seed {seed}: {decisions} decisions, {exact} exact, {ambiguous} not compared in {took:.1f}s")
    return report
