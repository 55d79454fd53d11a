"""KubeSchedulerConfiguration v1 handling against the real v1.36 kube-scheduler.

`kube-scheduler --config=C --write-config-to=OUT` loads, defaults and validates C,
builds every profile's framework and writes the effective configuration, without an
API server. For each valid configuration here its output must equal ours rendered
the same way (render_config, completed); for each invalid one both must refuse it,
with the same text unless the case says why not.
"""

from __future__ import annotations

import json
import re
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.app import RunOptions, configz
from kubesched.config.load import ConfigError, load_config
from kubesched.config.render import render_config
from kubesched.config.trust import TRUSTED
from kubesched.framework.interface import Handle
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.framework.runtime.framework import Framework
from kubesched_testing.controlplane import ControlPlane, assets_dir, free_port, missing_assets_reason

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
users: [{name: u, user: {token: t}}]
"""


@dataclass(frozen=True)
class Case:
    name: str
    doc: dict[str, Any]
    valid: bool = True
    differs: str = ""  # invalid only: why the texts differ (both must still refuse)


def V(name: str, doc: dict[str, Any]) -> Case:
    return Case(name, doc)


def X(name: str, doc: dict[str, Any], differs: str = "") -> Case:
    return Case(name, doc, valid=False, differs=differs)


def prof(**kw: Any) -> dict[str, Any]:
    return {"profiles": [kw]}


def args(name: str, a: Any) -> dict[str, Any]:
    return prof(pluginConfig=[{"name": name, "args": a}])


def points(**sets: Any) -> dict[str, Any]:
    return prof(plugins=sets)


NA_TERM = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}
EXT = {"urlPrefix": "http://127.0.0.1:1/ext"}

CASES = [
    # Valid: top level.
    V("empty", {}),
    V("parallelism and backoff", {"parallelism": 32, "podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 20}),
    V("whole float and nulls", {"parallelism": 8.0, "profiles": None, "percentageOfNodesToScore": None}),
    V("percentage global", {"percentageOfNodesToScore": 100}),
    V(
        "percentage per profile",
        {
            "percentageOfNodesToScore": 30,
            "profiles": [
                {"schedulerName": "a", "percentageOfNodesToScore": 0},
                {"schedulerName": "b", "percentageOfNodesToScore": 70},
                {"schedulerName": "c"},
            ],
        },
    ),
    V("two profiles", {"profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}]}),
    V(
        "leader election",
        {
            "leaderElection": {
                "leaderElect": True,
                "leaseDuration": "1m",
                "renewDeadline": "30s",
                "retryPeriod": "1.5s",
                "resourceName": "sched",
                "resourceNamespace": "ns",
            }
        },
    ),
    V(
        "leader election zeros default",
        {"leaderElection": {"leaseDuration": "0s", "renewDeadline": "0", "resourceLock": ""}},
    ),
    V(
        "leader election off",
        {"leaderElection": {"leaderElect": False, "resourceLock": "endpoints", "retryPeriod": "-1s"}},
    ),
    V(
        "client connection",
        {"clientConnection": {"qps": 12.5, "burst": 0, "contentType": "application/json", "acceptContentTypes": "a/b"}},
    ),
    V("client connection zero qps", {"clientConnection": {"qps": 0, "burst": 7}}),
    V("profiling off", {"enableProfiling": False}),
    V("contention without profiling", {"enableProfiling": False, "enableContentionProfiling": True}),
    V("delay cache", {"delayCacheUntilActive": True}),
    # Valid: plugins.
    V(
        "score re-weighted and disabled",
        points(score={"enabled": [{"name": "TaintToleration", "weight": 5}], "disabled": [{"name": "ImageLocality"}]}),
    ),
    V(
        "score star",
        points(score={"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 3}]}),
    ),
    V("multiPoint re-weighted", points(multiPoint={"enabled": [{"name": "NodeResourcesFit", "weight": 4}]})),
    V(
        "multiPoint disable one",
        points(multiPoint={"disabled": [{"name": "VolumeBinding"}, {"name": "InterPodAffinity"}]}),
    ),
    V(
        "multiPoint star reordered",
        points(
            multiPoint={
                "disabled": [{"name": "*", "weight": 3}],
                "enabled": [
                    {"name": "DefaultBinder"},
                    {"name": "NodeResourcesFit", "weight": 2},
                    {"name": "PrioritySort"},
                    {"name": "TaintToleration", "weight": 1},
                ],
            }
        ),
    ),
    V(
        "filter star reordered",
        points(filter={"disabled": [{"name": "*"}], "enabled": [{"name": "NodeName"}, {"name": "NodePorts"}]}),
    ),
    V(
        "specific points",
        points(
            preEnqueue={"disabled": [{"name": "SchedulingGates"}]},
            queueSort={"enabled": [{"name": "PrioritySort"}]},
            postFilter={"disabled": [{"name": "DefaultPreemption"}]},
            reserve={"disabled": [{"name": "*"}]},
            permit={"disabled": [{"name": "*"}]},
            preBind={"disabled": [{"name": "VolumeBinding"}]},
            bind={"disabled": [{"name": "*"}], "enabled": [{"name": "DefaultBinder"}]},
            postBind={"disabled": [{"name": "*"}]},
        ),
    ),
    V("placement points empty", points(placementGenerate={}, placementScore={"disabled": [{"name": "*"}]})),
    V("multiPoint duplicate of a default", points(multiPoint={"enabled": [{"name": "PrioritySort"}]})),
    # Valid: plugin args, each kind with some fields left out.
    V("DefaultPreemption partial", args("DefaultPreemption", {"minCandidateNodesPercentage": 5})),
    V("DefaultPreemption zero percentage", args("DefaultPreemption", {"minCandidateNodesPercentage": 0})),
    V("InterPodAffinity partial", args("InterPodAffinity", {"ignorePreferredTermsOfExistingPods": True})),
    V("InterPodAffinity zero weight", args("InterPodAffinity", {"hardPodAffinityWeight": 0})),
    V(
        "NodeAffinity added",
        args(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [NA_TERM]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 3, "preference": NA_TERM}],
                }
            },
        ),
    ),
    V(
        "BalancedAllocation resources",
        args(
            "NodeResourcesBalancedAllocation",
            {"resources": [{"name": "cpu"}, {"name": "example.com/gpu", "weight": 1}]},
        ),
    ),
    V(
        "Fit most allocated",
        args(
            "NodeResourcesFit",
            {
                "ignoredResources": ["example.com/a"],
                "ignoredResourceGroups": ["example.com"],
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 3}, {"name": "memory"}],
                },
            },
        ),
    ),
    V(
        "Fit requested to capacity ratio",
        args(
            "NodeResourcesFit",
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                    },
                }
            },
        ),
    ),
    V(
        "Fit empty resources",
        args("NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated", "resources": []}}),
    ),
    V(
        "PodTopologySpread list",
        args(
            "PodTopologySpread",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"},
                    {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
        ),
    ),
    V("PodTopologySpread list empty", args("PodTopologySpread", {"defaultingType": "List"})),
    V("VolumeBinding zero timeout", args("VolumeBinding", {"bindTimeoutSeconds": 0})),
    V("DynamicResources timeouts", args("DynamicResources", {"filterTimeout": "0s", "bindingTimeout": "90s"})),
    V("DynamicResources filter only", args("DynamicResources", {"filterTimeout": "1h30m"})),
    V(
        "args with type meta",
        args("InterPodAffinity", {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "InterPodAffinityArgs"}),
    ),
    V("args name only", prof(pluginConfig=[{"name": "NodeAffinity"}, {"name": "VolumeBinding", "args": None}])),
    V(
        "args of a disabled plugin",
        prof(
            plugins={"multiPoint": {"disabled": [{"name": "InterPodAffinity"}]}},
            pluginConfig=[{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 7}}],
        ),
    ),
    V("args of an unknown plugin", args("Nope", {"anything": [1, 2]})),
    V("args of an args-less plugin", args("ImageLocality", {"anything": True})),
    # Valid: extenders.
    V(
        "extenders",
        {
            "extenders": [
                {
                    **EXT,
                    "filterVerb": "filter",
                    "prioritizeVerb": "prioritize",
                    "weight": 3,
                    "bindVerb": "bind",
                    "preemptVerb": "preempt",
                    "enableHTTPS": True,
                    "tlsConfig": {"insecure": True, "serverName": "x"},
                    "httpTimeout": "1m",
                    "nodeCacheCapable": True,
                    "ignorable": True,
                },
                {
                    **EXT,
                    "managedResources": [
                        {"name": "example.com/foo", "ignoredByScheduler": True},
                        {"name": "example.com/bar"},
                    ],
                },
            ]
        },
    ),
    # Invalid: decoding.
    X("unknown field", {"foo": 1}),
    X("removed v1 field", {"healthzBindAddress": "0.0.0.0:10251"}),
    X(
        "unknown fields everywhere",
        {"zz": 1, "profiles": [{"aa": 1, "pluginConfig": [{"name": "NodeResourcesFit", "args": {"b": 1, "a": 2}}]}]},
    ),
    X(
        "unknown field in a core object",
        args(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists", "bad": 1}]}]
                    }
                }
            },
        ),
    ),
    X("wrong type", {"parallelism": "5"}),
    X("wrong type nested", {"profiles": [{"plugins": {"score": {"enabled": [{"name": "A", "weight": "x"}]}}}]}),
    X("fraction for an int", {"podInitialBackoffSeconds": 1.5}),
    X("wrong type in args", args("NodeResourcesFit", {"foo": 1, "ignoredResources": 5})),
    X("args of the wrong kind", args("NodeResourcesFit", {"kind": "InterPodAffinityArgs"})),
    X("args of an unknown version", args("NodeAffinity", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"})),
    X("args not an object", args("NodeAffinity", "abc")),
    X("bad duration", {"leaderElection": {"retryPeriod": "abc"}}),
    X("duration as a number", {"leaderElection": {"retryPeriod": 5}}),
    X("bad base64", {"extenders": [{**EXT, "tlsConfig": {"certData": "!!!"}}]}),
    X("insecure with a CA", {"extenders": [{**EXT, "tlsConfig": {"insecure": True, "caData": "YWJj"}}]}),
    X("old apiVersion", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}),
    X("wrong kind", {"kind": "Policy"}),
    # Invalid: validation.
    X("parallelism zero", {"parallelism": 0}),
    X("percentage over 100", {"percentageOfNodesToScore": 101}),
    X("profile percentage negative", prof(percentageOfNodesToScore=-1)),
    X("initial backoff zero", {"podInitialBackoffSeconds": 0}),
    X("max backoff below initial", {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2}),
    X("several errors", {"parallelism": -1, "percentageOfNodesToScore": -5, "podInitialBackoffSeconds": -1}),
    X("duplicate profile names", {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}),
    X("profile without name", {"profiles": [{"schedulerName": "a"}, {}]}),
    X(
        "different queue sort",
        {
            "profiles": [
                {"schedulerName": "a"},
                {
                    "schedulerName": "b",
                    "plugins": {"queueSort": {"enabled": [{"name": "X"}], "disabled": [{"name": "*"}]}},
                },
            ]
        },
    ),
    X("two queue sorts", points(queueSort={"enabled": [{"name": "PrioritySort"}, {"name": "Other"}]})),
    X(
        "different queue sort args",
        {
            "profiles": [
                {"schedulerName": "a", "pluginConfig": [{"name": "PrioritySort", "args": {"x": 1}}]},
                {"schedulerName": "b"},
            ]
        },
    ),
    X("duplicate plugin config", prof(pluginConfig=[{"name": "VolumeBinding"}, {"name": "VolumeBinding"}])),
    X("removed plugin at a point", points(filter={"enabled": [{"name": "EBSLimits"}]})),
    X("removed plugin config", args("GCEPDLimits", {})),
    X("legacy plugin at a point", points(filter={"enabled": [{"name": "NodeLabel"}]})),
    X("legacy plugin in multiPoint", points(multiPoint={"enabled": [{"name": "SelectorSpread"}]})),
    X(
        "leader election durations",
        {"leaderElection": {"leaseDuration": "5s", "renewDeadline": "10s", "retryPeriod": "-1s"}},
    ),
    X("resource lock", {"leaderElection": {"resourceLock": "endpoints"}}),
    X("negative burst", {"clientConnection": {"burst": -1}}),
    X("extender weight", {"extenders": [{**EXT, "prioritizeVerb": "p"}]}),
    X("two binders", {"extenders": [{**EXT, "bindVerb": "b"}, {**EXT, "bindVerb": "b"}]}),
    X(
        "managed resources",
        {
            "extenders": [
                {
                    **EXT,
                    "managedResources": [
                        {"name": "cpu"},
                        {"name": "a/b/c"},
                        {"name": "example.com/x"},
                        {"name": "example.com/x"},
                    ],
                }
            ]
        },
    ),
    X(
        "ignored resource without Fit",
        {
            "extenders": [{**EXT, "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": True}]}],
            **points(multiPoint={"disabled": [{"name": "NodeResourcesFit"}]}),
        },
    ),
    # Invalid: plugin args.
    X(
        "DefaultPreemption zeros",
        args("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}),
    ),
    X(
        "DefaultPreemption ranges",
        args("DefaultPreemption", {"minCandidateNodesPercentage": 101, "minCandidateNodesAbsolute": -1}),
    ),
    X("InterPodAffinity weight", args("InterPodAffinity", {"hardPodAffinityWeight": 101})),
    X("Fit strategy type", args("NodeResourcesFit", {"scoringStrategy": {"type": "Foo"}})),
    X(
        "Fit strategy type empty",
        args("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 101}]}}),
    ),
    X("Fit ratio without shape", args("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}})),
    X(
        "Fit bad shape",
        args(
            "NodeResourcesFit",
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [
                            {"utilization": 50, "score": 11},
                            {"utilization": 10, "score": -1},
                            {"utilization": 101, "score": 0},
                        ]
                    },
                }
            },
        ),
    ),
    X(
        "Fit ratio on another type",
        args("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated", "requestedToCapacityRatio": {}}}),
    ),
    X(
        "Fit ignored names",
        args("NodeResourcesFit", {"ignoredResources": ["a/b/c", "-x"], "ignoredResourceGroups": ["example.com/x", ""]}),
    ),
    X(
        "BalancedAllocation weights",
        args("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}, {"name": "cpu"}]}),
    ),
    X(
        "PodTopologySpread system with constraints",
        args(
            "PodTopologySpread",
            {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
        ),
    ),
    X(
        "PodTopologySpread bad constraints",
        args(
            "PodTopologySpread",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Maybe", "labelSelector": {}},
                    {"maxSkew": 1, "topologyKey": "a/b/c", "whenUnsatisfiable": ""},
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
        ),
    ),
    X("PodTopologySpread defaulting type", args("PodTopologySpread", {"defaultingType": "Foo"})),
    X(
        "NodeAffinity bad terms",
        args(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "a", "operator": "Foo"}, {"key": "-b", "operator": "In"}]},
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]},
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "preference": {"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["x", "-"]}]},
                        },
                        {"weight": 0, "preference": {"matchExpressions": [{"key": "k", "operator": "Bad"}]}},
                    ],
                }
            },
        ),
    ),
    X("VolumeBinding shape", args("VolumeBinding", {"shape": [{"utilization": 0, "score": 10}]})),
    X("VolumeBinding negative timeout", args("VolumeBinding", {"bindTimeoutSeconds": -1})),
    X("DynamicResources bad timeouts", args("DynamicResources", {"filterTimeout": "-1s", "bindingTimeout": "500ms"})),
    # Invalid: what upstream finds while building the frameworks.
    X("negative weight", points(score={"enabled": [{"name": "ImageLocality", "weight": -1}]})),
    X("unknown plugin", points(filter={"enabled": [{"name": "Nope"}]})),
    X("unknown plugin at multiPoint", points(multiPoint={"enabled": [{"name": "Nope"}]})),
    X("plugin not at its point", points(filter={"enabled": [{"name": "ImageLocality"}]})),
    X("placement point", points(placementScore={"enabled": [{"name": "ImageLocality"}]})),
    X("no bind plugin", points(bind={"disabled": [{"name": "*"}]})),
    X("the same queue sort twice", points(queueSort={"enabled": [{"name": "PrioritySort"}, {"name": "PrioritySort"}]})),
    X("duplicate at a point", points(score={"enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality"}]})),
]


def _upstream_error(stderr: str) -> str:
    """The error kube-scheduler printed (klog: err="..." or err=<...> over several lines)."""
    m = re.search(r'"command failed" err="((?:[^"\\]|\\.)*)"', stderr)
    if m:
        return str(json.loads('"' + m.group(1) + '"'))
    m = re.search(r'"command failed" err=<\n(.*?)\n >', stderr, re.S)
    assert m, stderr
    return "\n".join(line.removeprefix("\t") for line in m.group(1).split("\n"))


def _document(case: Case, kubeconfig: Path) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    doc.update(case.doc)
    doc["clientConnection"] = {"kubeconfig": str(kubeconfig), **(case.doc.get("clientConnection") or {})}
    return doc


def _run_upstream(binary: Path, workdir: Path, doc: dict[str, Any]) -> tuple[bool, Any]:
    workdir.mkdir(parents=True)
    config, out = workdir / "config.yaml", workdir / "out.yaml"
    config.write_text(yaml.safe_dump(doc, sort_keys=False))
    cmd = [str(binary), f"--config={config}", f"--write-config-to={out}", "--secure-port=0"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode == 0:
        return True, yaml.safe_load(out.read_text())
    return False, _upstream_error(proc.stderr)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[bool, Any]]]:
    """Every case through kube-scheduler --write-config-to, in parallel."""
    assets = assets_dir()
    if assets is None:
        pytest.skip(missing_assets_reason())
    root = tmp_path_factory.mktemp("config-parity")
    kubeconfig = root / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    binary = assets / "kube-scheduler"
    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = {
            c.name: pool.submit(_run_upstream, binary, root / f"case{i}", _document(c, kubeconfig))
            for i, c in enumerate(CASES)
        }
        yield {name: f.result() for name, f in futures.items()}


def _ours(doc: dict[str, Any]) -> tuple[bool, Any]:
    """Load as `kubesched run` does and build every profile's framework; (valid, rendered or error text)."""
    try:
        cfg = load_config(doc, trust=TRUSTED)
        for prof, prof_args in zip(cfg.raw.profiles, cfg.profile_args, strict=True):
            try:
                Framework(new_in_tree_registry(), prof, prof_args, Handle())
            except FrameworkError as err:
                raise FrameworkError(
                    f"initializing profiles: creating profile for scheduler name {prof.schedulerName}: {err}"
                ) from err
    except ConfigError as err:
        return False, err.message
    except FrameworkError as err:
        return False, str(err)
    return True, render_config(cfg, completed=True)


def test_cases_are_distinct_and_many() -> None:
    assert len({c.name for c in CASES}) == len(CASES)
    assert sum(c.valid for c in CASES) >= 40 and sum(not c.valid for c in CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_config_matches_upstream(case: Case, upstream: dict[str, tuple[bool, Any]], tmp_path: Path) -> None:
    up_valid, up = upstream[case.name]
    assert up_valid == case.valid, f"upstream says {up!r}"
    doc = _document(case, tmp_path / "kubeconfig")
    if case.valid:
        doc["clientConnection"]["kubeconfig"] = up["clientConnection"]["kubeconfig"]
    ok, ours = _ours(doc)
    assert ok == case.valid, f"ours says {ours!r}"
    if case.valid or not case.differs:
        assert ours == up


CONFIGZ_DOC: dict[str, Any] = {
    "parallelism": 4,
    "leaderElection": {"leaderElect": True, "leaseDuration": "20s"},
    "profiles": [
        {
            "schedulerName": "configz-a",
            "plugins": {"multiPoint": {"disabled": [{"name": "InterPodAffinity"}]}},
            "pluginConfig": [
                {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 5}},
                {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 3}},
            ],
        },
        {"schedulerName": "configz-b", "percentageOfNodesToScore": 40},
    ],
}


def _fetch_configz(port: int, timeout: float = 30.0) -> Any:
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{port}/configz", context=ctx, timeout=2) as resp:
                return json.loads(resp.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.parametrize("verbosity", [0, 2])
def test_configz_matches_upstream(control_plane: ControlPlane, verbosity: int) -> None:
    """/configz: upstream's v1 configuration after its leader election flags; profiles completed from -v=2."""
    port = free_port()
    flags = (
        f"--secure-port={port}",
        "--bind-address=127.0.0.1",
        "--authorization-always-allow-paths=/configz",
        "--leader-elect=false",
        "--leader-elect-retry-period=3s",
    )
    proc = control_plane.start_scheduler(CONFIGZ_DOC, verbosity=verbosity, name=f"configz-v{verbosity}", args=flags)
    try:
        up = _fetch_configz(port)["componentconfig"]
    finally:
        proc.stop()
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        **CONFIGZ_DOC,
        "clientConnection": {"kubeconfig": str(control_plane.kubeconfig_path)},
    }
    opts = RunOptions(leader_elect=False, retry_period=3.0, verbosity=verbosity)
    assert configz(load_config(doc, source="config.yaml", trust=TRUSTED), opts) == up
