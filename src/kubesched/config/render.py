"""The effective configuration in v1's shape, as kube-scheduler serialises it.

Two views, as upstream has two. `completed` is what `--write-config-to` writes (and
/configz serves at -v>=2): each profile as its framework captured it, pluginConfig
only for enabled plugins with args, sorted by name. Otherwise the profiles are as
defaulting left them, which /configz serves at lower verbosity: every pluginConfig
entry, the user's first, then the defaults appended by name. Fields follow the v1 Go
types' JSON rules: optional (pointer) fields disappear when unset, `omitempty` ones
when empty, every plugin set is present, durations print as Go prints them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from kubesched.config.decode import Spec, field_spec, is_string
from kubesched.config.defaults import enabled_plugin_names
from kubesched.config.load import SchedulerConfig
from kubesched.config.names import PLACEMENT_POINTS, PLUGIN_SETS
from kubesched.config.types import API_VERSION, KubeSchedulerProfile, PluginSet, _Args

_OMIT = object()


def go_number(v: Any) -> Any:
    """Go prints whole floats (qps) without a fraction."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _zero(spec: Spec) -> Any:
    if spec.kind == "struct":
        return _struct(spec, {})
    if spec.kind in ("slice", "map", "raw") or spec.pointer:
        return None
    if spec.go == "duration":
        return "0s"
    return "" if is_string(spec.go) else (False if spec.go == "bool" else 0)


def _field(v: Any, spec: Spec, always: bool) -> Any:
    """One field's JSON value, or _OMIT; `v` is None when unset."""
    if v is None:
        return _zero(spec) if always else _OMIT
    if spec.kind == "struct":
        return _struct(spec, v)
    if spec.kind == "slice":
        if not v and not always:
            return _OMIT
        assert spec.elem is not None
        return [_zero(spec.elem) if x is None else _field(x, spec.elem, True) for x in v]
    if spec.kind == "map" and not v and not always:
        return _OMIT
    if not always and not spec.pointer and spec.kind == "scalar" and v in ("", 0, False):
        return _OMIT
    return go_number(v)


def _struct(spec: Spec, v: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """A v1 struct, from a model or from the plain data a plugin keeps: fields in Go's order."""
    model = spec.model
    assert model is not None
    always: frozenset[str] = getattr(model, "go_always", frozenset())
    out: dict[str, Any] = {}
    for name in model.model_fields:
        if issubclass(model, _Args) and name in ("apiVersion", "kind"):
            continue
        value = v.get(name) if isinstance(v, dict) else getattr(v, name)
        rendered = _field(value, field_spec(model, name), name in always)
        if rendered is not _OMIT:
            out[name] = rendered
    return out


def _object(m: BaseModel) -> dict[str, Any]:
    return _struct(Spec("struct", model=type(m)), m)


def _plugin_set(ps: PluginSet) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if ps.enabled:
        out["enabled"] = [{"name": p.name, "weight": p.weight or 0} for p in ps.enabled]
    if ps.disabled:
        out["disabled"] = [{"name": p.name, "weight": p.weight or 0} for p in ps.disabled]
    return out


def _args(args: Any) -> Any:
    """Typed args with their apiVersion and kind; anything else (out-of-tree) as given."""
    if isinstance(args, _Args):
        return {"kind": type(args).__name__, "apiVersion": API_VERSION, **_object(args)}
    return args


def _profile(prof: KubeSchedulerProfile, completed: bool, placement: bool = True) -> dict[str, Any]:
    """`placement`: the release's configuration has the placement points (v1.36)."""
    out: dict[str, Any] = {"schedulerName": prof.schedulerName or ""}
    if prof.percentageOfNodesToScore is not None:
        out["percentageOfNodesToScore"] = prof.percentageOfNodesToScore
    assert prof.plugins is not None
    points = PLUGIN_SETS if placement else [p for p in PLUGIN_SETS if p not in PLACEMENT_POINTS]
    out["plugins"] = {point: _plugin_set(getattr(prof.plugins, point)) for point in points}
    configs = prof.pluginConfig
    if completed:
        needed = set(enabled_plugin_names(prof.plugins))
        configs = sorted((pc for pc in configs if pc.name in needed and pc.args is not None), key=lambda pc: pc.name)
    if configs:
        out["pluginConfig"] = [{"name": pc.name, "args": _args(pc.args)} for pc in configs]
    return out


def render_config(config: SchedulerConfig, *, completed: bool = True) -> dict[str, Any]:
    """The effective KubeSchedulerConfiguration as v1 JSON data (see the module docstring for `completed`)."""
    raw = config.raw
    le, cc = raw.leaderElection, raw.clientConnection
    out: dict[str, Any] = {
        "kind": raw.kind,
        "apiVersion": raw.apiVersion,
        "parallelism": raw.parallelism,
        "leaderElection": {
            "leaderElect": le.leaderElect,
            "leaseDuration": le.leaseDuration,
            "renewDeadline": le.renewDeadline,
            "retryPeriod": le.retryPeriod,
            "resourceLock": le.resourceLock,
            "resourceName": le.resourceName,
            "resourceNamespace": le.resourceNamespace,
        },
        "clientConnection": {
            "kubeconfig": cc.kubeconfig,
            "acceptContentTypes": cc.acceptContentTypes,
            "contentType": cc.contentType,
            "qps": go_number(cc.qps),
            "burst": cc.burst,
        },
        "enableProfiling": bool(raw.enableProfiling),
        "enableContentionProfiling": bool(raw.enableContentionProfiling),
        "percentageOfNodesToScore": raw.percentageOfNodesToScore or 0,
        "podInitialBackoffSeconds": raw.podInitialBackoffSeconds,
        "podMaxBackoffSeconds": raw.podMaxBackoffSeconds,
        "profiles": [_profile(p, completed, config.release.placement_points) for p in raw.profiles],
    }
    if raw.extenders:
        out["extenders"] = [_object(e) for e in raw.extenders]
    if raw.delayCacheUntilActive:
        out["delayCacheUntilActive"] = True
    return out
