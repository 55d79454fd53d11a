"""The kube-scheduler release a run follows (`--kubernetes-version`): its feature gates and differing behaviours.

Upstream answers "which behaviour?" with one process-wide feature gate plus the code of the
release it was built from. kubesched carries three releases in one tree, so a `Release` is
handed along with the configuration instead: it holds the release's gate table (with any
`--feature-gates` applied) and names each behaviour that changed between v1.34 and v1.36 as
one property, so that a plugin asks `release.balanced_allocation_scores_change` rather than
comparing version strings. docs/versions.md is the table a user reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any, Final

from kubesched.release_gates import GATES

SUPPORTED: Final = ("1.34", "1.35", "1.36")
LATEST: Final = "1.36"

_STAGES: Final = {"A": "ALPHA", "B": "BETA", "G": "GA", "D": "DEPRECATED"}
# strconv.ParseBool's spellings.
_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})

NODE_DECLARED_FEATURES_GATE: Final = "NodeDeclaredFeatures"  # the gate; the plugin of that name is config/names.py's

# kubesched follows the DRA gates (allocator switches, extended resources, bindingTimeout) and
# NodeDeclaredFeatures (the default plugins); gates of other components change nothing it simulates.
# Scheduler gates off by default whose behaviour kubesched does not implement: turning one on is refused
# rather than silently simulated without it.
NOT_IMPLEMENTED_ON: Final = frozenset(
    {
        "StorageCapacityScoring",
        "TaintTolerationComparisonOperators",
        "DRADeviceTaintRules",
        "DRAListTypeAttributes",
        "DRANodeAllocatableResources",
        "DRAResourcePoolStatus",
        "VolumeLimitScaling",
        "SchedulerAsyncAPICalls",
    }
)
# The gates of workload-aware scheduling (v1.36 alpha, all off by default), by name.
GENERIC_WORKLOAD: Final = "GenericWorkload"
GANG_SCHEDULING: Final = "GangScheduling"
TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: Final = "TopologyAwareWorkloadScheduling"
WORKLOAD_AWARE_PREEMPTION: Final = "WorkloadAwarePreemption"
WORKLOAD_WITH_JOB: Final = "WorkloadWithJob"
DRA_WORKLOAD_RESOURCE_CLAIMS: Final = "DRAWorkloadResourceClaims"
WORKLOAD_GATES: Final = (
    GENERIC_WORKLOAD,
    GANG_SCHEDULING,
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
    WORKLOAD_AWARE_PREEMPTION,
    WORKLOAD_WITH_JOB,
    DRA_WORKLOAD_RESOURCE_CLAIMS,
)
# kube_features.go's dependency table for those gates: a gate on needs these on too (checked as the
# binary checks it at start-up, for a release that has the gate).
DEPENDENCIES: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        GANG_SCHEDULING: (GENERIC_WORKLOAD,),
        TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: (GENERIC_WORKLOAD,),
        WORKLOAD_AWARE_PREEMPTION: (GANG_SCHEDULING,),
        WORKLOAD_WITH_JOB: (GENERIC_WORKLOAD,),
        DRA_WORKLOAD_RESOURCE_CLAIMS: ("DynamicResourceAllocation", GENERIC_WORKLOAD),
    }
)

# Scheduler gates on by default that kubesched cannot turn off: its code is the gate on.
NOT_IMPLEMENTED_OFF: Final = frozenset(
    {
        "SchedulerAsyncPreemption",
        "SchedulerPopFromBackoffQ",
        "PodLevelResources",
        "DRASchedulerFilterTimeout",
        "InPlacePodVerticalScaling",
    }
)


# The words of configuration errors that changed since an older release: (v1.36's, the release's), in order.
_SCHEME_V1_36: Final = 'in scheme "pkg/scheduler/apis/config/scheme/scheme.go:29"'
_OVERFLOW: Final = "total score of Score plugins could overflow"
MESSAGE_REWRITES: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "1.34": (
        (_SCHEME_V1_36, 'in scheme "pkg/runtime/scheme.go:110"'),
        ("a valid label key must consist", "a qualified name must consist"),
        (f"score plugins: {_OVERFLOW}", _OVERFLOW),
    ),
    "1.35": (
        (_SCHEME_V1_36, 'in scheme "pkg/runtime/scheme.go:111"'),
        (f"score plugins: {_OVERFLOW}", _OVERFLOW),
    ),
}


class ReleaseError(ValueError):
    """A --kubernetes-version or --feature-gates value refused; the text is the binary's where it has one."""

    def __init__(self, message: str, flag: str = "--feature-gates") -> None:
        super().__init__(message)
        self.flag = flag  # the command-line flag the value came from


@dataclass(frozen=True, slots=True)
class GateSpec:
    stage: str  # ALPHA | BETA | GA | DEPRECATED
    default: bool
    locked: bool


@cache
def gate_specs(minor: str) -> Mapping[str, GateSpec]:
    """The release's known gates (AllAlpha and AllBeta included), by name."""
    specs: dict[str, GateSpec] = {}
    for line in GATES[minor].split("\n"):
        if not line:
            continue
        name, code = line.split()
        specs[name] = GateSpec(_STAGES[code[0]], code[1] == "+", code.endswith("!"))
    return MappingProxyType(specs)


def parse_version(text: str) -> str:
    """`1.35`, `v1.35` or a full `v1.35.7` (as /version's gitVersion) to the minor kubesched knows."""
    raw = text.strip()
    parts = raw.removeprefix("v").split("-")[0].split("+")[0].split(".")
    minor = ".".join(parts[:2])
    if len(parts) < 2 or not all(p.isdigit() for p in parts) or minor not in SUPPORTED:
        raise ReleaseError(
            f'unsupported Kubernetes version "{raw}": want one of {", ".join(SUPPORTED)}', "--kubernetes-version"
        )
    return minor


@dataclass(frozen=True, slots=True)
class Release:
    """One kube-scheduler minor with its effective feature gates."""

    minor: str = LATEST
    overrides: tuple[tuple[str, bool], ...] = ()  # what --feature-gates set, in order (a tuple: hashable, picklable)
    warnings: tuple[str, ...] = field(default=(), compare=False)  # what --feature-gates was warned about

    @property
    def version(self) -> str:
        return "v" + self.minor

    @property
    def number(self) -> tuple[int, int]:
        major, minor = self.minor.split(".")
        return int(major), int(minor)

    def enabled(self, gate: str) -> bool:
        """The gate's value; False for a gate this release does not have."""
        given = dict(self.overrides)
        if gate in given:
            return given[gate]
        spec = gate_specs(self.minor).get(gate)
        if spec is None:
            return False
        if not spec.locked and spec.stage in ("ALPHA", "BETA"):
            bulk = "AllAlpha" if spec.stage == "ALPHA" else "AllBeta"
            if given.get(bulk):
                return True
        return spec.default

    def with_feature_gates(self, text: str) -> Release:
        """--feature-gates A=true,B=false applied on top of this release; the binary's errors for bad entries."""
        overrides = dict(self.overrides)
        specs = gate_specs(self.minor)
        unknown: list[str] = []
        items = [part.strip() for part in text.split(",") if part.strip()]
        if len({item.startswith("kube:") for item in items}) > 1:
            raise ReleaseError(
                "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use"
            )
        for item in items:
            if not item:
                continue
            name, sep, value = item.partition("=")
            name = name.strip().removeprefix("kube:")
            if not sep:
                raise ReleaseError(f"missing bool value for {name}")
            value = value.strip()
            if value not in _TRUE and value not in _FALSE:
                raise ReleaseError(
                    f'invalid value of {name}={value}, err: strconv.ParseBool: parsing "{value}": invalid syntax'
                )
            if name not in specs:
                if self.refuses_unknown_gates:
                    raise ReleaseError(f"unrecognized feature gate: {name}")
                unknown.append(name)
                continue
            on = value in _TRUE
            spec = specs[name]
            if spec.locked and on != spec.default:
                raise ReleaseError(
                    f"cannot set feature gate {name} to {str(on).lower()}, "
                    f"feature is locked to {str(spec.default).lower()}"
                )
            overrides[name] = on
        warned = tuple(f"unrecognized feature gate: {name}" for name in sorted(set(unknown)))
        release = Release(self.minor, tuple(overrides.items()), (*self.warnings, *warned))
        release.check_dependencies()
        release.check_implemented()
        return release

    def check_dependencies(self) -> None:
        """kube_features.go's dependencies among the workload-aware gates the release has, in the binary's words.

        v1.35 has GangScheduling on GenericWorkload only; v1.34 has none of them. The binary names every
        unmet dependency, several as an aggregate in a Go map's order: sorted here.
        """
        specs = gate_specs(self.minor)
        problems = []
        for gate, needs in DEPENDENCIES.items():
            if gate not in specs or not self.enabled(gate):
                continue
            missing = [need for need in needs if need in specs and not self.enabled(need)]
            if missing:
                problems.append(f"{gate} is enabled, but depends on features that are disabled: [{' '.join(missing)}]")
        if len(problems) == 1:
            raise ReleaseError(problems[0])
        if problems:
            raise ReleaseError(f"[{', '.join(sorted(problems))}]")

    def check_implemented(self) -> None:
        """Refuse a gate value kubesched would not honour (kubesched's own refusal: the binary has no such error)."""
        for name in sorted(NOT_IMPLEMENTED_ON):
            if name in gate_specs(self.minor) and self.enabled(name):
                raise ReleaseError(f"feature gate {name}=true is not implemented by kubesched")
        if not self.workload_aware_supported:
            for name in WORKLOAD_GATES:
                if name in gate_specs(self.minor) and self.enabled(name):
                    raise ReleaseError(
                        f"feature gate {name}=true is not implemented by kubesched for {self.version}: "
                        f"kubesched follows v{LATEST}'s workload API (scheduling.k8s.io/v1alpha2), not {self.version}'s"
                    )
        for name in sorted(NOT_IMPLEMENTED_OFF):
            if name in gate_specs(self.minor) and not self.enabled(name):
                raise ReleaseError(f"feature gate {name}=false is not implemented by kubesched")

    # The behaviours that differ between releases, each named once.

    @property
    def refuses_unknown_gates(self) -> bool:
        """Up to v1.35 an unknown --feature-gates name is an error; v1.36 warns and goes on."""
        return self.number < (1, 36)

    @property
    def balanced_allocation_scores_change(self) -> bool:
        """v1.36: BalancedAllocation scores the change the pod makes to the balance; before, the balance after."""
        return self.number >= (1, 36)

    @property
    def dynamic_resources_scores(self) -> bool:
        """v1.35 made DynamicResources a Score plugin (prioritized-list alternatives); v1.34's has no Score."""
        return self.number >= (1, 35)

    @property
    def dynamic_resources_weight(self) -> int | None:
        """Its weight in the default plugin set: 2 since v1.35, none (so no Score) in v1.34."""
        return 2 if self.dynamic_resources_scores else None

    @property
    def has_node_declared_features(self) -> bool:
        """The NodeDeclaredFeatures plugin exists since v1.35; it joins the default set when its gate is on."""
        return NODE_DECLARED_FEATURES_GATE in gate_specs(self.minor)

    @property
    def dynamic_resources_binding_timeout_default(self) -> bool:
        """v1.35 defaults DynamicResourcesArgs.bindingTimeout when binding conditions and device status are on."""
        return (
            self.number >= (1, 35)
            and self.enabled("DRADeviceBindingConditions")
            and self.enabled("DRAResourceClaimDeviceStatus")
        )

    @property
    def dynamic_resources_binding_timeout_field(self) -> bool:
        """DynamicResourcesArgs.bindingTimeout exists since v1.35."""
        return self.number >= (1, 35)

    def config_message(self, text: str) -> str:
        """A configuration error's text (v1.36's words) in this release's words."""
        for new, old in MESSAGE_REWRITES.get(self.minor, ()):
            text = text.replace(new, old)
        return text

    @property
    def fit_ratio_checked_by_type(self) -> bool:
        """v1.36 requires requestedToCapacityRatio exactly when the type is RequestedToCapacityRatio and checks
        its shape there; before, a given requestedToCapacityRatio's shape was checked as scoringStrategy.shape."""
        return self.number >= (1, 36)

    @property
    def dra_newest_allocator(self) -> bool:
        """Whether upstream's DRA allocator is its newest variant (which knows consumable capacity) for these gates.

        It uses the oldest variant supporting every enabled allocator feature; v1.34 counts
        device status (DRAResourceClaimDeviceStatus, on) apart from binding conditions, and
        only the newest variant has it; from v1.35 the two count as one feature.
        """
        on = self.enabled
        if on("DRAConsumableCapacity"):
            return True
        if self.number < (1, 35):
            return on("DRADeviceBindingConditions") or on("DRAResourceClaimDeviceStatus")
        return on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus")

    @property
    def dra_result_tolerations(self) -> bool:
        """Since v1.35 an allocation result carries its request's tolerations."""
        return self.number >= (1, 35)

    @property
    def dra_v1_34_allocator(self) -> bool:
        """v1.34's allocator allocates from incomplete pools (fails on invalid ones, which later releases skip)
        and checks subrequests' capacity per request."""
        return self.number < (1, 35)

    @property
    def workload_aware_supported(self) -> bool:
        """Workload-aware scheduling (GenericWorkload and the gates on it) as v1.36 has it; v1.35's alpha
        workload API (scheduling.k8s.io/v1alpha1) differs and is not simulated, v1.34 has no such gates."""
        return self.number >= (1, 36)

    @property
    def workload_aware(self) -> bool:
        """GenericWorkload: PodGroups exist, pods name their group, the queue schedules groups."""
        return self.workload_aware_supported and self.enabled(GENERIC_WORKLOAD)

    def gate_text(self) -> str:
        """The overrides as the flag takes them, sorted (empty at the defaults)."""
        return ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.overrides))

    @property
    def placement_points(self) -> bool:
        """v1.36's configuration has the pod-group points placementGenerate and placementScore."""
        return self.number >= (1, 36)

    def describe(self) -> str:
        """`v1.35` or `v1.35 (DRAPartitionableDevices=true)`, for messages and reports."""
        if not self.overrides:
            return self.version
        gates = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.overrides))
        return f"{self.version} ({gates})"


DEFAULT: Final = Release()

# The first line `kubesched snapshot` writes, naming the cluster's version (GET /version's gitVersion);
# a comment, so that every YAML reader, kubectl included, still reads the file.
SNAPSHOT_MARKER: Final = "# kubesched snapshot of a Kubernetes cluster at "


def snapshot_header(git_version: str) -> str:
    return f"{SNAPSHOT_MARKER}{git_version}\n"


def recorded_version(text: str) -> str | None:
    """The cluster version a snapshot's first line records, if the text starts with one."""
    first = text[: len(SNAPSHOT_MARKER) + 80].split("\n", 1)[0]
    if not first.startswith(SNAPSHOT_MARKER):
        return None
    return first[len(SNAPSHOT_MARKER) :].strip() or None


def snapshot_version(explicit: str | None, recorded: tuple[str, str] | None) -> tuple[str | None, str | None]:
    """The version to follow and what to say about it: `explicit` wins, else the (source, gitVersion) a
    snapshot recorded, when kubesched follows that release; the note is None when there is nothing to say."""
    if explicit is not None or recorded is None:
        return explicit, None
    source, git_version = recorded
    try:
        minor = parse_version(git_version)
    except ReleaseError:
        return None, f"{source} records Kubernetes {git_version}; simulating v{LATEST} (--kubernetes-version to choose)"
    return minor, f"{source} records Kubernetes {git_version}: following kube-scheduler v{minor} (--kubernetes-version)"


def release_arguments(r: Release) -> dict[str, Any]:
    """`r` as the Python API's keyword arguments (kubernetes_version, feature_gates)."""
    gates = ",".join(f"{k}={str(v).lower()}" for k, v in r.overrides)
    return {"kubernetes_version": r.minor, "feature_gates": gates}


def release(version: str | None = None, feature_gates: str = "") -> Release:
    """The release named by `version` (default: the newest) with `feature_gates` applied."""
    minor = LATEST if version is None else parse_version(version)
    return Release(minor).with_feature_gates(feature_gates)
