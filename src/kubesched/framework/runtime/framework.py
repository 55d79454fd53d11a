"""Framework: one profile's plugins wired to extension points (framework/runtime/framework.go).

Builds the per-point plugin lists from the profile (specific points first, then the
multiPoint expansion with upstream's override and ordering rules) and runs them with
upstream's runner semantics. The per-node filter pass over all nodes lives in
schedule_one, which uses the vectorised plugin paths when present.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np

from kubesched.config import names
from kubesched.config.trust import is_import_path
from kubesched.config.types import KubeSchedulerProfile, Plugins, PluginSet
from kubesched.framework import interface as fw
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    MIN_NODE_SCORE,
    BindingWait,
    BoolArray,
    Handle,
    IntArray,
    MetricsRecorder,
    NodeScoreList,
    Plugin,
    PostFilterResult,
    PreFilterResult,
    SharedLister,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.runtime.batch import OpportunisticBatch
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.framework.runtime.out_of_tree import PluginLoadError
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.runtime.waiting_pods import WaitingPod
from kubesched.framework.status import Code, Status, as_status
from kubesched.framework.types import NodeToStatus, PodInfo
from kubesched.klog import V, info

log = logging.getLogger(__name__)

POINT_TYPES: dict[str, type[Plugin]] = {
    names.PRE_ENQUEUE: fw.PreEnqueuePlugin,
    names.QUEUE_SORT: fw.QueueSortPlugin,
    names.PRE_FILTER: fw.PreFilterPlugin,
    names.FILTER: fw.FilterPlugin,
    names.POST_FILTER: fw.PostFilterPlugin,
    names.PRE_SCORE: fw.PreScorePlugin,
    names.SCORE: fw.ScorePlugin,
    names.RESERVE: fw.ReservePlugin,
    names.PERMIT: fw.PermitPlugin,
    names.PRE_BIND: fw.PreBindPlugin,
    names.BIND: fw.BindPlugin,
    names.POST_BIND: fw.PostBindPlugin,
    names.PLACEMENT_GENERATE: fw.PlacementGeneratePlugin,
    names.PLACEMENT_SCORE: fw.PlacementScorePlugin,
}
MAX_PERMIT_TIMEOUT = 15 * 60.0
# Up to this many candidate nodes, the filter pass runs the plain per-node plugins only.
NARROWED_NODES = 16

R = TypeVar("R")
Runner = TypeVar("Runner", bound=Callable[..., Any])


def status_label(result: object) -> str:
    """Upstream labels durations with the status code's name; Success when there is no status."""
    status = result[1] if isinstance(result, tuple) and len(result) > 1 else result
    if not isinstance(status, Status):
        return "Success"
    return "".join(part.capitalize() for part in status.code.name.lower().split("_"))


def extension_point(point: str) -> Callable[[Runner], Runner]:
    """Times a runner into the extension-point histogram, when the handle has a metrics recorder.

    Every runner takes (state, pod, one more) first; naming them keeps the untimed call cheap.
    """

    def wrap(run: Runner) -> Runner:
        def timed(fwk: Framework, state: CycleState, pod: PodInfo, arg: Any, *rest: Any) -> Any:
            metrics = fwk.handle.metrics
            if metrics is None:
                return run(fwk, state, pod, arg, *rest)
            start = time.perf_counter()
            result = run(fwk, state, pod, arg, *rest)
            metrics.observe_extension_point(point, status_label(result), fwk.profile_name, time.perf_counter() - start)
            return result

        functools.update_wrapper(timed, run)
        return cast(Runner, timed)

    return wrap


_NO_POSITIONS = np.empty(0, dtype=np.int64)


@dataclass(slots=True)
class FilterPass:
    """What one filter pass over the nodes found; positions are the snapshot's."""

    feasible: IntArray  # in examination order, at most k
    examined: int  # nodes of the order examined: the next start index advances by this much
    batch_rejected: IntArray  # examined and rejected by a vectorised plugin
    node_rejected: list[int]  # examined and rejected by a per-node plugin or the nominated pods' two passes
    statuses: dict[int, Status]  # rejections whose status the pass already knows
    nominated: set[int]  # nodes judged by the two-pass path, beside nominated pods

    @property
    def rejected_count(self) -> int:
        return len(self.batch_rejected) + len(self.node_rejected)


def scores_in_range(columns: Sequence[np.ndarray]) -> bool:
    """Whether every plugin's normalized scores lie in [MIN_NODE_SCORE, MAX_NODE_SCORE]: two reductions over
    the plugins' columns joined, not two per plugin; the per-plugin check runs only to name one out of range."""
    if not columns:
        return True
    joined = np.concatenate(columns)
    return not len(joined) or bool(
        np.minimum.reduce(joined) >= MIN_NODE_SCORE and np.maximum.reduce(joined) <= MAX_NODE_SCORE
    )


def _plugin_failed(running: str, plugin: str, message: str) -> Status:
    """An extension point's error naming the plugin, in upstream's words."""
    return as_status(RuntimeError(f'{running}: plugin "{plugin}" failed with: {message}'))


def _sign_plugins(fwk: Framework) -> tuple[list[fw.SignPlugin], set[str]]:
    """The PreFilter, Filter, PreScore and Score plugins that sign pods (each once), and those that cannot."""
    signing: dict[str, fw.SignPlugin] = {}
    unsigned: set[str] = set()
    for point in (names.PRE_FILTER, names.FILTER, names.PRE_SCORE, names.SCORE):
        for pl in fwk.points[point]:
            if pl.name in signing or pl.name in unsigned:
                continue
            if isinstance(pl, fw.SignPlugin):
                signing[pl.name] = pl
            else:
                unsigned.add(pl.name)
    return list(signing.values()), unsigned


def _has_batch_filter(plugin: Plugin) -> bool:
    return callable(getattr(plugin, "filter_batch", None))


def _rejection(status: Status | None, node_info: NodeInfo) -> Status:
    """The per-node path must reject a node the batch path rejected; anything else is a plugin bug."""
    if status is None:
        raise RuntimeError(f"filter plugins disagree on node {node_info.name}: batch rejected, per-node passed")
    return status


def _weight_at(plugins: Plugins, name: str) -> str:
    """Where a Score plugin's weight is given: the score point's entry, else multiPoint's."""
    for point in ("score", "multiPoint"):
        for i, p in enumerate(getattr(plugins, point).enabled):
            if p.name == name:
                return f"plugins.{point}.enabled[{i}].weight"
    return "plugins.score"


def _enabled_at(plugins: Plugins, name: str) -> str:
    """Where a profile first enables `name` (multiPoint first, as the framework reads them)."""
    for point in (names.MULTI_POINT, *names.EXTENSION_POINTS):
        for i, p in enumerate(getattr(plugins, point).enabled):
            if p.name == name:
                return f"plugins.{point}.enabled[{i}].name"
    return "plugins"


def _args_at(profile: KubeSchedulerProfile, name: str, plugins: Plugins) -> str:
    """Where a plugin's args are given, else where it is enabled."""
    for i, pc in enumerate(profile.pluginConfig):
        if pc.name == name:
            return f"pluginConfig[{i}].args"
    return _enabled_at(plugins, name)


class _BatchFailed(Exception):
    """A vectorised filter raised: the pass starts again node by node."""


def _batch_mask(
    batch: Sequence[fw.BatchFilterPlugin], state: CycleState, pod: PodInfo, table: NodeTable, rows: slice
) -> BoolArray:
    """Every vectorised filter's verdict on the rows of `rows`, and-ed into a new array (the caller may write it;
    a plugin's own array, which it may keep, is never written)."""
    mask: BoolArray | None = None
    try:
        for plugin in batch:
            got = plugin.filter_batch(state, pod, table, rows)
            mask = got.copy() if mask is None else np.logical_and(mask, got, out=mask)
    except Exception as err:
        raise _BatchFailed from err
    return np.ones(rows.stop - rows.start, dtype=bool) if mask is None else mask


def _rotated_mask(
    batch: Sequence[fw.BatchFilterPlugin],
    state: CycleState,
    pod: PodInfo,
    table: NodeTable,
    start: int,
    lo: int,
    hi: int,
) -> BoolArray:
    """The verdicts on positions lo..hi of the rotation from `start`: one row slice, or two where it wraps."""
    n = table.n
    first, last = start + lo, start + hi
    if last <= n:
        return _batch_mask(batch, state, pod, table, slice(first, last))
    if first >= n:
        return _batch_mask(batch, state, pod, table, slice(first - n, last - n))
    return np.concatenate(
        (
            _batch_mask(batch, state, pod, table, slice(first, n)),
            _batch_mask(batch, state, pod, table, slice(0, last - n)),
        )
    )


class Framework:
    def __init__(
        self,
        registry: Registry,
        profile: KubeSchedulerProfile,
        args: dict[str, Any],
        handle: Handle,
        *,
        percentage_of_nodes_to_score: int | None = None,
        opportunistic_batching: bool = False,
    ) -> None:
        self.profile_name = profile.schedulerName or ""
        # The profile's own handle: the scheduler's services, naming this profile and framework.
        self.handle = handle = dataclasses.replace(handle, profile_name=self.profile_name, framework=self)
        self.waiting_pods: dict[str, WaitingPod] = {}
        self.percentage_of_nodes_to_score = (
            profile.percentageOfNodesToScore
            if profile.percentageOfNodesToScore is not None
            else percentage_of_nodes_to_score
        )
        plugins = profile.plugins or Plugins()
        wanted: dict[str, None] = {}
        for point in (names.MULTI_POINT, *names.EXTENSION_POINTS, *names.PLACEMENT_POINTS):
            for p in getattr(plugins, point).enabled:
                wanted.setdefault(p.name, None)
        self.plugins_map: dict[str, Plugin] = {}
        for name in wanted:
            factory = registry.get(name)  # import paths are there when the Scheduler trusted the configuration
            if factory is None:
                continue  # reported by the first point that lists it, with that point's type
            try:
                plugin = factory(args.get(name), handle)
            except PluginLoadError as err:
                raise FrameworkError(str(err), _enabled_at(plugins, name)) from err
            except Exception as err:  # a plugin's constructor is user code too
                raise FrameworkError(f'initializing plugin "{name}": {err}', _args_at(profile, name, plugins)) from err
            if not isinstance(plugin, Plugin):
                raise FrameworkError(
                    f'plugin "{name}": the factory returned {type(plugin).__name__}, not a Plugin',
                    _enabled_at(plugins, name),
                )
            if plugin.name != name:
                if not is_import_path(name):
                    raise FrameworkError(
                        f'plugin "{name}": the plugin calls itself "{plugin.name}"', _enabled_at(plugins, name)
                    )
                plugin.NAME = name  # known by the name its profile gives it
            self.plugins_map[name] = plugin
        self.score_weights: dict[str, int] = {}
        self.placement_weights: dict[str, int] = {}  # PlacementScore plugins' weights
        built = (*names.BUILD_ORDER, *names.PLACEMENT_POINTS)
        specific = {point: self._specific_point(point, getattr(plugins, point)) for point in built}
        self.points: dict[str, list[Plugin]] = {}
        for point in built:
            expanded = self._expand_multi_point(point, specific[point], getattr(plugins, point), plugins.multiPoint)
            self.points[point] = [self.plugins_map[n] for n in expanded]
        # Each point's list holds plugins of that point's type: _specific_point checked every name.
        self.pre_enqueue_plugins = cast(list[fw.PreEnqueuePlugin], self.points["preEnqueue"])
        self.pre_filter_plugins = cast(list[fw.PreFilterPlugin], self.points["preFilter"])
        self.filter_plugins = cast(list[fw.FilterPlugin], self.points["filter"])
        self.post_filter_plugins = cast(list[fw.PostFilterPlugin], self.points["postFilter"])
        self.pre_score_plugins = cast(list[fw.PreScorePlugin], self.points["preScore"])
        self.score_plugins = cast(list[fw.ScorePlugin], self.points["score"])
        self.reserve_plugins = cast(list[fw.ReservePlugin], self.points["reserve"])
        self.permit_plugins = cast(list[fw.PermitPlugin], self.points["permit"])
        self.pre_bind_plugins = cast(list[fw.PreBindPlugin], self.points["preBind"])
        self.bind_plugins = cast(list[fw.BindPlugin], self.points["bind"])
        self.post_bind_plugins = cast(list[fw.PostBindPlugin], self.points["postBind"])
        self.placement_generate_plugins = cast(list[fw.PlacementGeneratePlugin], self.points["placementGenerate"])
        self.placement_score_plugins = cast(list[fw.PlacementScorePlugin], self.points["placementScore"])
        total = 0
        for pl in self.score_plugins:
            w = self.score_weights.setdefault(pl.name, 1)
            if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
                raise FrameworkError("total score of Score plugins could overflow", _weight_at(plugins, pl.name))
            total += w * MAX_NODE_SCORE
        if len(self.points["queueSort"]) != 1:
            raise FrameworkError(
                f'only one queue sort plugin required for profile with scheduler name "{self.profile_name}", '
                f"but got {len(self.points['queueSort'])}",
                "plugins.queueSort",
            )
        if not self.bind_plugins:
            raise FrameworkError(
                f'at least one bind plugin is needed for profile with scheduler name "{self.profile_name}"',
                "plugins.bind",
            )
        self.queue_sort = self.points["queueSort"][0]
        # Which filter plugins have a vectorised twin: decided once, not per pod.
        self.batch_filter_plugins = [cast(fw.BatchFilterPlugin, p) for p in self.filter_plugins if _has_batch_filter(p)]
        self.per_node_filter_plugins = [p for p in self.filter_plugins if not _has_batch_filter(p)]
        self.sign_plugins, self.unsigned_plugins = _sign_plugins(self)
        # Signatures only when every plugin that judges or scores a pod can sign it, and no extender does.
        self.enable_signatures = opportunistic_batching and not self.unsigned_plugins and not handle.extenders
        if opportunistic_batching and not self.enable_signatures:
            log.info(
                "Disabling signatures for profile %s: %s",
                self.profile_name,
                "it has extenders" if handle.extenders else f"plugins {sorted(self.unsigned_plugins)} cannot sign pods",
            )
        self.batch: OpportunisticBatch | None = None
        if opportunistic_batching:
            self.batch = OpportunisticBatch(
                self.profile_name,
                lambda: handle.scheduler_clock().now,
                self.run_filter_plugins,
                lambda name: handle.shared_lister().get(name),
                handle.metrics,
            )

    def placement_weights_or_score(self, point: str) -> dict[str, int]:
        """Where a score point's weights go: node scores' or placement scores' own."""
        if point == names.SCORE:
            return self.score_weights
        return self.placement_weights

    def _specific_point(self, point: str, specific: PluginSet) -> list[str]:
        """updatePluginList: the point's own list, every name known and of the point's type, once."""
        kind = POINT_TYPES[point]
        type_name = kind.__name__
        enabled: dict[str, None] = {}
        for i, p in enumerate(specific.enabled):
            at = f"plugins.{point}.enabled[{i}].name"
            if p.name not in self.plugins_map:
                raise FrameworkError(f'{type_name} "{p.name}" does not exist', at)
            if not isinstance(self.plugins_map[p.name], kind):
                raise FrameworkError(f'plugin "{p.name}" does not extend {type_name} plugin', at)
            if p.name in enabled:
                raise FrameworkError(f'plugin "{p.name}" already registered as "{type_name}"', at)
            enabled[p.name] = None
            if point in (names.SCORE, names.PLACEMENT_SCORE):
                self.placement_weights_or_score(point)[p.name] = p.weight or 1
        return list(enabled)

    def _expand_multi_point(self, point: str, enabled: list[str], specific: PluginSet, multi: PluginSet) -> list[str]:
        """expandMultiPointPlugins: plugins the point re-lists (in its order), then multiPoint's, then its others."""
        kind = POINT_TYPES[point]
        type_name = kind.__name__
        disabled = {p.name for p in specific.disabled}
        if "*" in disabled:
            return enabled
        overrides: set[str] = set()
        from_multi: dict[str, None] = {}
        for i, p in enumerate(multi.enabled):
            at = f"plugins.multiPoint.enabled[{i}].name"
            pl = self.plugins_map.get(p.name)
            if pl is None:
                raise FrameworkError(f'{type_name} "{p.name}" does not exist', at)
            if not isinstance(pl, kind) or p.name in disabled:
                continue
            if p.name in enabled:
                overrides.add(p.name)
                continue
            if p.name in from_multi:
                raise FrameworkError(f'plugin "{p.name}" already registered as "{type_name}"', at)
            from_multi[p.name] = None
            if point in (names.SCORE, names.PLACEMENT_SCORE):
                self.placement_weights_or_score(point)[p.name] = p.weight or 1
        return [
            *(n for n in enabled if n in overrides),
            *from_multi,
            *(n for n in enabled if n not in overrides),
        ]

    # Signatures (OpportunisticBatching)

    def sign_pod(self, pod: PodInfo) -> str | None:
        """SignPod: every signing plugin's fragments and the scheduler name as one canonical text; None when
        signatures are off for the profile or a plugin will not sign this pod (it is then never batched).

        With metrics, the Sign point and each plugin's call are timed on every pod, as upstream does; the
        point's status label is always Success there, and so here."""
        if not self.enable_signatures:
            return None
        metrics = self.handle.metrics
        start = time.perf_counter()
        sig: dict[str, Any] = {signers.SCHEDULER_NAME: pod.scheduler_name}
        signed = True
        for pl in self.sign_plugins:
            began = time.perf_counter()
            fragments, s = pl.sign_pod(pod)
            if metrics is not None:
                metrics.observe_plugin(pl.name, "Sign", status_label(s), time.perf_counter() - began)
            if s is not None and not s.is_success():
                if s.code == Code.ERROR:
                    log.error("SignPod failed for plugin %s: %s", pl.name, s.message())
                info(log, V(5), "SignPod can't sign pod due to plugin", plugin=pl.name, status=s.message())
                signed = False
                break
            sig.update(fragments)
        if metrics is not None:
            metrics.observe_extension_point("Sign", "Success", self.profile_name, time.perf_counter() - start)
        return signers.canonical(sig) if signed else None

    # PreEnqueue / QueueSort

    def _sampled(self) -> MetricsRecorder | None:
        """The recorder, on the cycles whose per-plugin durations are sampled (upstream: 10 %)."""
        metrics = self.handle.metrics
        return metrics if metrics is not None and metrics.plugin_sampled() else None

    def _run_plugin(self, metrics: MetricsRecorder, point: str, plugin: str, call: Callable[..., R], *args: Any) -> R:
        """A plugin call timed into the per-plugin histogram (the runners call plugins directly when unsampled)."""
        start = time.perf_counter()
        result = call(*args)
        metrics.observe_plugin(plugin, point, status_label(result), time.perf_counter() - start)
        return result

    def run_pre_enqueue_plugins(self, pod: PodInfo) -> Status | None:
        for pl in self.pre_enqueue_plugins:
            s = pl.pre_enqueue(pod)
            if s is not None and not s.is_success():
                s.with_plugin(pl.name)
                if not s.is_rejected():
                    return as_status(RuntimeError(f'running PreEnqueue plugin "{pl.name}": {s.message()}')).with_plugin(
                        pl.name
                    )
                return s
        return None

    # PreFilter / Filter

    @extension_point("PreFilter")
    def run_pre_filter_plugins(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        result: PreFilterResult | None = None
        returned: Status | None = None
        with_nodes: list[str] = []
        skip = state.skip_filter_plugins
        metrics = self._sampled() if self.handle.metrics is not None else None
        for pl in self.pre_filter_plugins:
            r, s = (
                pl.pre_filter(state, pod, nodes)
                if metrics is None
                else self._run_plugin(metrics, "PreFilter", pl.name, pl.pre_filter, state, pod, nodes)
            )
            if s is not None and s.is_skip():
                skip.add(pl.name)
                continue
            if s is not None and not s.is_success():
                s.with_plugin(pl.name)
                if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, s, []
                if s.code == Code.UNSCHEDULABLE:
                    returned = s
                    continue
                err = as_status(RuntimeError(f'running PreFilter plugin "{pl.name}": {s.message()}'))
                return None, err.with_plugin(pl.name), []
            if r is not None and not r.all_nodes():
                with_nodes.append(pl.name)
            result = r if result is None else result.merge(r)
            if result is not None and not result.all_nodes() and not result.node_names:
                if len(with_nodes) == 1:
                    msg = f"node(s) didn't satisfy plugin {with_nodes[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) [{' '.join(with_nodes)}] simultaneously"
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), with_nodes
        return result, returned, with_nodes

    def run_filter_plugins(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo, record: dict[str, str] | None = None
    ) -> Status | None:
        """Filter plugins in order until the first rejection; `record` collects each plugin's outcome."""
        skip = state.skip_filter_plugins
        for pl in self.filter_plugins:
            if pl.name in skip:
                continue
            try:
                s = pl.filter(state, pod, node_info)
            except Exception as err:
                s = as_status(err)
            if s is not None and not s.is_success():
                if not s.is_rejected():
                    s = as_status(RuntimeError(f'running "{pl.name}" filter plugin: {s.message()}'))
                if record is not None:
                    record[pl.name] = s.message()
                return s.with_plugin(pl.name)
            if record is not None:
                record[pl.name] = "passed"
        return None

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo, record: dict[str, str] | None = None
    ) -> Status | None:
        """Two passes when higher-or-equal priority pods are nominated here: with them, then without.

        The pod must fit beside the nominated pods (they will come back), and must not rely
        on them either (they may go elsewhere): inter-pod affinity to a nominated pod is not enough.
        """
        added, state_with, info_with = self.add_ge_nominated_pods(pod, state, node_info)
        status = self.run_filter_plugins(state_with, pod, info_with, record)
        if added and status is None:
            if record is not None:
                record.clear()  # the record shows the pass that decides
            status = self.run_filter_plugins(state, pod, node_info, record)
        return status

    def run_filter_plugins_over_nodes(
        self,
        state: CycleState,
        pod: PodInfo,
        snapshot: SharedLister,
        order: IntArray,
        k: int,
        start: int | None = None,
    ) -> FilterPass:
        """Filter the nodes at `order` (snapshot positions) until `k` pass; findNodesThatPassFilters' inner loop.

        Plugins with a vectorised twin judge a window of nodes at once; the others then run node
        by node over what is left, in `order`, stopping at the k-th feasible node. When `order` is
        every row rotated from `start`, the windows are row slices taken in turn, a little over k
        nodes first and twice as many each time after, so a pass where most nodes fit looks at
        about k nodes rather than all of them. Nodes where higher-or-equal priority pods are
        nominated take the two-pass per-node path instead.
        """
        num_nodes = len(order)
        skip = state.skip_filter_plugins
        if not self.filter_plugins or (skip and all(p.name in skip for p in self.filter_plugins)):
            return FilterPass(order[:k].copy(), min(k, num_nodes), _NO_POSITIONS, [], {}, set())
        all_nodes = snapshot.node_info_list
        table = snapshot.table
        batch = [b for b in self.batch_filter_plugins if b.name not in skip]
        per_node = [p for p in self.per_node_filter_plugins if p.name not in skip]
        if num_nodes <= NARROWED_NODES and num_nodes < table.n:
            # A few candidates (NodeName, a DaemonSet pod's node, a PreFilterResult): judging
            # them one by one costs O(candidates); the vectorised twins would cost O(nodes).
            batch, per_node = [], [p for p in self.filter_plugins if p.name not in skip]
        resolved: dict[int, Status | None] = {}
        for name in self.nodes_with_ge_nominated_pods(pod):
            p = snapshot.position.get(name)
            if p is not None:
                resolved[p] = self.run_filter_plugins_with_nominated_pods(state, pod, all_nodes[p])
        try:
            return self._filter_windows(state, pod, snapshot, order, k, start, batch, per_node, resolved)
        except _BatchFailed:
            # A plugin that fails (its PreFilter state missing, say) fails only on the nodes that reach it,
            # past every plugin before it: judge node by node, plugin by plugin in order, as upstream does.
            plugins = [p for p in self.filter_plugins if p.name not in skip]
            return self._filter_windows(state, pod, snapshot, order, k, None, [], plugins, resolved)

    def _filter_windows(
        self,
        state: CycleState,
        pod: PodInfo,
        snapshot: SharedLister,
        order: IntArray,
        k: int,
        start: int | None,
        batch: list[fw.BatchFilterPlugin],
        per_node: list[fw.FilterPlugin],
        resolved: dict[int, Status | None],
    ) -> FilterPass:
        """The pass itself, window after window of `order` until k nodes are feasible or none is left."""
        num_nodes = len(order)
        all_nodes = snapshot.node_info_list
        table = snapshot.table
        feasible: list[IntArray] = []  # each window's feasible positions: joined once, never walked in Python
        found = 0
        rejected: list[int] = []  # examined and rejected by a per-node plugin; statuses known
        statuses: dict[int, Status] = {p: st for p, st in resolved.items() if st is not None}
        batch_rejected: list[IntArray] = []
        full_mask: BoolArray | None = None
        examined = num_nodes
        lo, width = 0, k + k // 4 + NARROWED_NODES
        while lo < num_nodes:
            hi = min(num_nodes, lo + width)
            window = order[lo:hi]
            if not batch:
                passed = np.ones(hi - lo, dtype=bool)
            elif start is not None:
                passed = _rotated_mask(batch, state, pod, table, start, lo, hi)
            else:
                if full_mask is None:
                    full_mask = _batch_mask(batch, state, pod, table, slice(0, table.n))
                passed = full_mask[window]
            if resolved:
                for j in np.flatnonzero(np.isin(window, list(resolved))).tolist():
                    passed[j] = resolved[int(window[j])] is None
            done = False
            if not per_node:
                hits = np.flatnonzero(passed)
                need = k - found
                if len(hits) >= need:
                    end = int(hits[need - 1]) + 1
                    hits = hits[:need]
                    examined, passed, window, done = lo + end, passed[:end], window[:end], True
                feasible.append(window[hits])
                found += len(hits)
            else:
                kept: list[int] = []
                for i in range(hi - lo):
                    if not passed[i]:
                        continue
                    p = int(window[i])
                    st = None if p in resolved else self._run_filters(per_node, state, pod, all_nodes[p])
                    if st is None:
                        kept.append(p)
                        if found + len(kept) == k:
                            examined, passed, window, done = lo + i + 1, passed[: i + 1], window[: i + 1], True
                            break
                    else:
                        statuses[p] = st
                        rejected.append(p)
                feasible.append(np.array(kept, dtype=np.int64))
                found += len(kept)
            batch_rejected.append(window[~passed])
            if done:
                break
            lo, width = hi, 2 * width
        rejected_by_batch = np.concatenate(batch_rejected) if batch_rejected else _NO_POSITIONS
        if resolved:
            rejected_by_batch = rejected_by_batch[~np.isin(rejected_by_batch, list(resolved))]
            in_window = set(order[:examined].tolist())
            rejected.extend(p for p, st in resolved.items() if st is not None and p in in_window)
        joined = feasible[0] if len(feasible) == 1 else np.concatenate(feasible) if feasible else _NO_POSITIONS
        return FilterPass(joined, examined, rejected_by_batch, rejected, statuses, set(resolved))

    def _run_filters(
        self, plugins: Sequence[fw.FilterPlugin], state: CycleState, pod: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """The per-node plugins left after the vectorised ones, up to the first rejection."""
        for pl in plugins:
            try:
                st = pl.filter(state, pod, node_info)
            except Exception as err:
                raise RuntimeError(f'running "{pl.name}" filter plugin: {err}') from err
            if st is not None and not st.is_success():
                if not st.is_rejected():
                    raise RuntimeError(f'running "{pl.name}" filter plugin: {st.message()}')
                return st.with_plugin(pl.name)
        return None

    def rejection_statuses(
        self,
        state: CycleState,
        pod: PodInfo,
        snapshot: SharedLister,
        filtered: FilterPass,
        order: IntArray,
        record: dict[str, dict[str, str]] | None,
    ) -> dict[str, Status]:
        """Why each rejected node was rejected: the per-node path, run once per node whose reason is not known.

        The per-node path must reject what the vectorised path rejected; anything else is a plugin bug.
        With `record`, every examined node's per-plugin outcome is written there too.
        """
        all_nodes = snapshot.node_info_list
        statuses = filtered.statuses
        out: dict[str, Status] = {}
        records: dict[int, dict[str, str]] = {}
        for p in (*filtered.batch_rejected.tolist(), *filtered.node_rejected):
            ni = all_nodes[p]
            if record is not None:
                records[p] = {}
                if p in filtered.nominated:
                    self.run_filter_plugins_with_nominated_pods(state, pod, ni, records[p])
                else:
                    statuses[p] = _rejection(self.run_filter_plugins(state, pod, ni, records[p]), ni)
            elif p not in statuses:
                statuses[p] = _rejection(self.run_filter_plugins(state, pod, ni), ni)
            out[ni.name] = statuses[p]
        if record is not None:
            passed_all = self.passed_record(state)
            for p in order[: filtered.examined].tolist():
                record[all_nodes[p].name] = records.get(p) or dict(passed_all)
        return out

    def passed_record(self, state: CycleState) -> dict[str, str]:
        """A record entry for a node every (not skipped) filter plugin passed."""
        return {pl.name: "passed" for pl in self.filter_plugins if pl.name not in state.skip_filter_plugins}

    def add_ge_nominated_pods(
        self, pod: PodInfo, state: CycleState, node_info: NodeInfo
    ) -> tuple[bool, CycleState, NodeInfo]:
        nominator = self.handle.nominator
        if nominator is None:
            return False, state, node_info
        nominated = [
            p
            for p in nominator.nominated_pods_for_node(node_info.name)
            if p.uid != pod.uid and p.priority >= pod.priority
        ]
        if not nominated:
            return False, state, node_info
        state_out, info_out = state.clone(), node_info.clone()
        for p in nominated:
            info_out.add_pod(p)
            s = self.run_pre_filter_extension_add_pod(state_out, pod, p, info_out)
            if s is not None and not s.is_success():
                raise RuntimeError(s.message())
        return True, state_out, info_out

    def nodes_with_ge_nominated_pods(self, pod: PodInfo) -> list[str]:
        nominator = self.handle.nominator
        if nominator is None or not nominator.nominated_pods:
            return []
        return [
            node
            for node, pods in nominator.nominated_pods.items()
            if any(p.uid != pod.uid and p.priority >= pod.priority for p in pods)
        ]

    # Waiting pods (Permit)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extension("AddPod", state, pod, to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extension("RemovePod", state, pod, to_remove, node_info)

    def _run_pre_filter_extension(
        self, op: str, state: CycleState, pod: PodInfo, other: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        for pl in self.pre_filter_plugins:
            if pl.name in state.skip_filter_plugins:
                continue
            ext = pl.pre_filter_extensions()
            if ext is None:
                continue
            fn = ext.add_pod if op == "AddPod" else ext.remove_pod
            s = fn(state, pod, other, node_info)
            if s is not None and not s.is_success():
                return as_status(RuntimeError(f'running {op} on PreFilter plugin "{pl.name}": {s.message()}'))
        return None

    # PostFilter

    @extension_point("PostFilter")
    def run_post_filter_plugins(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        metrics = self._sampled() if self.handle.metrics is not None else None
        for pl in self.post_filter_plugins:
            r, s = (
                pl.post_filter(state, pod, statuses)
                if metrics is None
                else self._run_plugin(metrics, "PostFilter", pl.name, pl.post_filter, state, pod, statuses)
            )
            if s is None or s.is_success():
                return r, s
            if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, s.with_plugin(pl.name)
            if not s.is_rejected():
                return None, as_status(RuntimeError(s.message())).with_plugin(pl.name)
            if r is not None and r.nominating_info is not None and r.nominating_info.mode != "Noop":
                result = r
            reasons.extend(s.reasons)
            rejector = rejector or pl.name
        return result, Status(Code.UNSCHEDULABLE, *reasons).with_plugin(rejector)

    # PreScore / Score

    @extension_point("PreScore")
    def run_pre_score_plugins(
        self,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        table: NodeTable | None = None,
        positions: IntArray | None = None,
    ) -> Status | None:
        """PreScore; with the NodeTable and the nodes' snapshot positions, plugins' pre_score_batch paths are used."""
        skip = state.skip_score_plugins
        metrics = self._sampled() if self.handle.metrics is not None else None
        for pl in self.pre_score_plugins:
            batch = getattr(pl, "pre_score_batch", None) if table is not None and positions is not None else None
            run: Callable[..., Status | None] = (
                pl.pre_score if batch is None else functools.partial(batch, table=table, positions=positions)
            )
            s = (
                run(state, pod, nodes)
                if metrics is None
                else self._run_plugin(metrics, "PreScore", pl.name, run, state, pod, nodes)
            )
            if s is not None and s.is_skip():
                skip.add(pl.name)
                continue
            if s is not None and not s.is_success():
                return as_status(RuntimeError(f'running PreScore plugin "{pl.name}": {s.message()}'))
        return None

    @extension_point("Score")
    def run_score_plugins(
        self,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        table: Any = None,
        positions: Any = None,
    ) -> tuple[list[tuple[str, np.ndarray, np.ndarray]], np.ndarray, Status | None]:
        """Score, normalise and weight; returns (plugin, raw, normalised) rows and the weighted totals.

        With a NodeTable and the snapshot positions of `nodes`, plugins' score_batch paths are used.
        """
        node_names = functools.cache(lambda: [ni.name for ni in nodes])  # only NormalizeScore may ask
        totals = np.zeros(len(nodes), dtype=np.int64)
        rows: list[tuple[str, np.ndarray, np.ndarray]] = []
        skip = state.skip_score_plugins
        # Upstream's phases: every plugin scores, then every plugin normalizes, then weights apply.
        plugins = [pl for pl in self.score_plugins if pl.name not in skip]
        raws: list[np.ndarray] = []
        for pl in plugins:
            batch = getattr(pl, "score_batch", None) if table is not None else None
            try:
                if batch is not None:
                    raw = batch(state, pod, table, positions)
                else:
                    raw = np.empty(len(nodes), dtype=np.int64)
                    for i, ni in enumerate(nodes):
                        sc, s = pl.score(state, pod, ni)
                        if s is not None and not s.is_success():
                            return [], totals, _plugin_failed("running Score plugins", pl.name, s.message())
                        raw[i] = sc
            except Exception as err:  # a plugin's error (its state missing, say) ends the cycle as its status would
                return [], totals, _plugin_failed("running Score plugins", pl.name, str(err))
            raws.append(raw)
        normalized: list[np.ndarray] = []
        for pl, raw in zip(plugins, raws, strict=True):
            scores = raw
            if pl.has_normalize():
                scores = raw.copy()
                try:
                    s = pl.normalize_score(state, pod, NodeScoreList(node_names, scores))
                except Exception as err:
                    s = as_status(err)
                if s is not None and not s.is_success():
                    return [], totals, _plugin_failed("running Normalize on Score plugins", pl.name, s.message())
            normalized.append(scores)
        in_range = scores_in_range(normalized)
        for pl, raw, scores in zip(plugins, raws, normalized, strict=True):
            if not in_range and len(scores) and (scores.min() < MIN_NODE_SCORE or scores.max() > MAX_NODE_SCORE):
                bad = int(scores[(scores < MIN_NODE_SCORE) | (scores > MAX_NODE_SCORE)][0])
                return (
                    [],
                    totals,
                    as_status(
                        RuntimeError(
                            f'plugin "{pl.name}" returns an invalid score {bad}, it should in the range of '
                            f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                        )
                    ),
                )
            totals += scores * self.score_weights[pl.name]
            rows.append((pl.name, raw, scores))
        return rows, totals, None

    # Reserve / Permit / Bind

    @extension_point("Reserve")
    def run_reserve_plugins_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        metrics = self._sampled() if self.handle.metrics is not None else None
        for pl in self.reserve_plugins:
            s = (
                pl.reserve(state, pod, node_name)
                if metrics is None
                else self._run_plugin(metrics, "Reserve", pl.name, pl.reserve, state, pod, node_name)
            )
            if s is not None and not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(pl.name)
                return as_status(RuntimeError(f'running Reserve plugin "{pl.name}": {s.message()}')).with_plugin(
                    pl.name
                )
        return None

    @extension_point("Unreserve")
    def run_reserve_plugins_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for pl in reversed(self.reserve_plugins):
            pl.unreserve(state, pod, node_name)

    @extension_point("Permit")
    def run_permit_plugins(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> tuple[Status | None, dict[str, float]]:
        """Returns the status and, for Wait, each waiting plugin's timeout (capped at 15 minutes)."""
        waits: dict[str, float] = {}
        wait_status: Status | None = None
        metrics = self._sampled() if self.handle.metrics is not None else None
        for pl in self.permit_plugins:
            s, timeout = (
                pl.permit(state, pod, node_name)
                if metrics is None
                else self._run_plugin(metrics, "Permit", pl.name, pl.permit, state, pod, node_name)
            )
            if s is None or s.is_success():
                continue
            if s.is_rejected():
                return s.with_plugin(pl.name), {}
            if s.is_wait():
                waits[pl.name] = min(timeout, MAX_PERMIT_TIMEOUT)
                wait_status = s
                continue
            return as_status(RuntimeError(f'running Permit plugin "{pl.name}": {s.message()}')).with_plugin(pl.name), {}
        if wait_status is not None:
            # v1.36: the last waiting plugin's status, with the framework's reason after its own.
            reasons = (*wait_status.reasons, "one or more plugins asked to wait and no plugin rejected pod")
            return Status(Code.WAIT, *reasons, err=wait_status.err), waits
        return None, {}

    def run_pre_bind_pre_flights(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Success when some PreBind plugin will have work, Skip when none will; the skipped ones are
        remembered so that PreBind passes them by. Any other answer is an error."""
        result: Status | None = Status(Code.SKIP)
        skip = state.skip_pre_bind_plugins
        for pl in self.pre_bind_plugins:
            s = pl.pre_bind_pre_flight(state, pod, node_name)
            if s is None or s.is_success():
                result = None
            elif s.is_skip():
                skip.add(pl.name)
            elif s.code == Code.ERROR:
                return as_status(RuntimeError(f'running PreBindPreFlight "{pl.name}": {s.message()}'))
            else:
                return as_status(
                    RuntimeError(
                        f'PreBindPreFlight {pl.name} returned "{s.code}", which is unsupported. '
                        "It is supposed to return Success, Skip, or Error status"
                    )
                )
        return result

    def will_wait_on_permit(self, pod: PodInfo) -> bool:
        return pod.uid in self.waiting_pods

    @extension_point("PreBind")
    def run_pre_bind_plugins(
        self, state: CycleState, pod: PodInfo, node_name: str, resume: BindingWait | None = None, expired: bool = False
    ) -> Status | None:
        """PreBind plugins in order; a BindingWait that one returns suspends the run, which `resume`
        (that wait, checked again or `expired`) takes up where it stopped. The wait comes back while
        it is still not over."""
        start = 0
        if resume is not None:
            s = resume.expired() if expired else resume.check()
            if s is not None and s.is_wait():
                return resume
            failed = self._pre_bind_failure(resume.plugin, s)
            if failed is not None:
                return failed
            start = resume.index + 1
        metrics = self._sampled() if self.handle.metrics is not None else None
        plugins = self.pre_bind_plugins
        for index in range(start, len(plugins)):
            pl = plugins[index]
            if pl.name in state.skip_pre_bind_plugins:
                continue
            s = (
                pl.pre_bind(state, pod, node_name)
                if metrics is None
                else self._run_plugin(metrics, "PreBind", pl.name, pl.pre_bind, state, pod, node_name)
            )
            if isinstance(s, BindingWait):
                s.index = index
                return s.with_plugin(pl.name)
            failed = self._pre_bind_failure(pl.name, s)
            if failed is not None:
                return failed
        return None

    @staticmethod
    def _pre_bind_failure(plugin: str, s: Status | None) -> Status | None:
        """What one PreBind plugin's answer means for the run: None to go on, else the run's failure."""
        if s is None or s.is_skip() or s.is_success():
            return None
        if s.is_rejected():
            return s.with_plugin(plugin)
        return as_status(RuntimeError(f'running PreBind plugin "{plugin}": {s.message()}')).with_plugin(plugin)

    @extension_point("Bind")
    def run_bind_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        metrics = self._sampled() if self.handle.metrics is not None else None
        for pl in self.bind_plugins:
            s = (
                pl.bind(state, pod, node_name)
                if metrics is None
                else self._run_plugin(metrics, "Bind", pl.name, pl.bind, state, pod, node_name)
            )
            if s is not None and s.is_skip():
                continue
            if s is not None and not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(pl.name)
                return as_status(RuntimeError(f'running Bind plugin "{pl.name}": {s.message()}')).with_plugin(pl.name)
            return s
        return Status(Code.SKIP)

    @extension_point("PostBind")
    def run_post_bind_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        metrics = self._sampled() if self.handle.metrics is not None else None
        for pl in self.post_bind_plugins:
            if metrics is None:
                pl.post_bind(state, pod, node_name)
            else:
                self._run_plugin(metrics, "PostBind", pl.name, pl.post_bind, state, pod, node_name)
