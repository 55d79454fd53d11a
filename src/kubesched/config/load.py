"""Load, default and validate a KubeSchedulerConfiguration document, in kube-scheduler's order.

Decode strictly (decode.py), default (defaults.py), validate (validation.py), then the
checks upstream only makes while it builds each profile's framework and that the
configuration alone decides (NodeResourcesFit's args, plugins v1 does not know, one
queue sort for all profiles). Errors read as kube-scheduler's: ConfigError.message is
its text, several field errors joined the way Go's aggregate error joins them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pydantic
from pydantic import BaseModel

from kubesched.api.errors import FieldError
from kubesched.config import names as n
from kubesched.config.decode import DecodeError, decode_configuration
from kubesched.config.defaults import default_args, enabled_plugin_names, set_defaults
from kubesched.config.goduration import go_quote as q
from kubesched.config.goduration import parse_go_duration
from kubesched.config.release_checks import release_checks, release_decode_error, release_unknown_fields
from kubesched.config.trust import UNTRUSTED, Trust, refusal
from kubesched.config.types import ARGS_TYPES, KIND, KubeSchedulerConfiguration, NodeResourcesFitArgs
from kubesched.config.validation import (
    LEGACY_ONLY_PLUGINS,
    POINT_TYPE_NAMES,
    validate_configuration,
    validate_fit_args,
)
from kubesched.release import DEFAULT, Release

DEFAULT_DOCUMENT = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": KIND}
# v1.36's in-tree registry beyond kubesched's: accepted upstream, no implementation here.
UPSTREAM_ONLY_PLUGINS: frozenset[str] = frozenset()
# The in-tree plugins of each pod-group point (workload-aware scheduling, v1.36 alpha).
PLACEMENT_PLUGINS = {
    n.PLACEMENT_GENERATE: frozenset({n.TOPOLOGY_PLACEMENT_GENERATOR}),
    n.PLACEMENT_SCORE: frozenset({n.POD_GROUP_PODS_COUNT, n.NODE_RESOURCES_FIT}),
}
# v1.36's in-tree plugins that kubesched implements too.
_IN_TREE = frozenset(
    {
        n.SCHEDULING_GATES,
        n.PRIORITY_SORT,
        n.NODE_UNSCHEDULABLE,
        n.NODE_NAME,
        n.TAINT_TOLERATION,
        n.NODE_AFFINITY,
        n.NODE_PORTS,
        n.NODE_RESOURCES_FIT,
        n.VOLUME_RESTRICTIONS,
        n.NODE_VOLUME_LIMITS,
        n.VOLUME_BINDING,
        n.VOLUME_ZONE,
        n.POD_TOPOLOGY_SPREAD,
        n.INTER_POD_AFFINITY,
        n.DYNAMIC_RESOURCES,
        n.DEFAULT_PREEMPTION,
        n.NODE_RESOURCES_BALANCED_ALLOCATION,
        n.IMAGE_LOCALITY,
        n.DEFAULT_BINDER,
        n.NODE_DECLARED_FEATURES,
        n.GANG_SCHEDULING,
        n.TOPOLOGY_PLACEMENT_GENERATOR,
        n.POD_GROUP_PODS_COUNT,
    }
)
DEFAULT_EXTENDER_TIMEOUT = "5s"
MAX_NODE_SCORE = 100
MAX_TOTAL_SCORE = 2**63 - 1
_SCORE_PLUGINS = frozenset(
    {
        n.TAINT_TOLERATION,
        n.NODE_AFFINITY,
        n.NODE_RESOURCES_FIT,
        n.VOLUME_BINDING,
        n.POD_TOPOLOGY_SPREAD,
        n.INTER_POD_AFFINITY,
        n.DYNAMIC_RESOURCES,
        n.NODE_RESOURCES_BALANCED_ALLOCATION,
        n.IMAGE_LOCALITY,
    }
)


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate's text: one error alone, several in brackets."""
    if len(messages) == 1:
        return messages[0]
    return "[" + ", ".join(messages) + "]"


class ConfigError(ValueError):
    """An unusable configuration; `errors` lists the fields at fault, `message` is upstream's text.

    `field` is where one error is, when upstream's text does not say it (decoding errors name the Go
    struct field without list indices; errors found building a profile name no field at all). Errors of
    that second kind (`framework`) are not worded as an invalid document, as upstream's are not.
    """

    def __init__(
        self,
        errors: list[FieldError],
        source: str = "",
        *,
        kind: str = KIND,
        message: str | None = None,
        field: str = "",
        framework: bool = False,
    ) -> None:
        self.errors = errors
        self.source = source
        self.message = message if message is not None else aggregate([str(e) for e in errors])
        self.field = field
        prefix = f"{source}: " if source else ""
        invalid = "" if framework else f"invalid {kind}: "
        super().__init__(prefix + invalid + (f"{field}: " if field else "") + self.message)


@dataclass
class SchedulerConfig:
    """A defaulted, validated configuration with typed args per profile.

    `source` is the file it came from ("" for the built-in defaults): without one,
    kube-scheduler's own flags fill in clientConnection. `trust` is how far it may bring in
    code and network endpoints (config/trust.py); the Scheduler holds it to that.
    """

    raw: KubeSchedulerConfiguration
    profile_args: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""
    document: dict[str, Any] | None = None  # as the user wrote it, to say where an error is; None: not a file's
    trust: Trust = UNTRUSTED
    release: Release = DEFAULT  # the kube-scheduler release it was defaulted and validated as

    def field_in_document(self, path: str) -> str:
        """`path` (into the defaulted configuration) as it reads in the user's document; '' when there is none."""
        return field_in_document(self.raw, self.document, path) if self.document is not None else ""


_MULTI_POINT_ENTRY = re.compile(r"^profiles\[(\d+)\]\.plugins\.multiPoint\.enabled\[(\d+)\]")


def field_in_document(cfg: KubeSchedulerConfiguration, doc: dict[str, Any], path: str) -> str:
    """Defaulting merges a profile's multiPoint plugins into the default list, so an index into the
    defaulted list is not the one in the file: the entry is found there by its plugin's name."""
    m = _MULTI_POINT_ENTRY.match(path)
    if not m:
        return path
    i, k = int(m.group(1)), int(m.group(2))
    plugins_of = cfg.profiles[i].plugins
    merged = plugins_of.multiPoint.enabled if plugins_of is not None else []
    if k >= len(merged):
        return path
    name = merged[k].name
    occurrence = sum(1 for p in merged[:k] if p.name == name)
    profiles = doc.get("profiles")
    prof = profiles[i] if isinstance(profiles, list) and i < len(profiles) else None
    plugins = prof.get("plugins") if isinstance(prof, dict) else None
    multi = plugins.get(n.MULTI_POINT) if isinstance(plugins, dict) else None
    given = multi.get("enabled") if isinstance(multi, dict) else None
    at = [j for j, p in enumerate(given or []) if isinstance(p, dict) and p.get("name") == name]
    if not at:
        return f"profiles[{i}].plugins.multiPoint.enabled"
    return f"profiles[{i}].plugins.multiPoint.enabled[{at[min(occurrence, len(at) - 1)]}]" + path[m.end() :]


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def pydantic_errors(err: pydantic.ValidationError, prefix: str = "") -> list[FieldError]:
    out = []
    for e in err.errors():
        path = _loc(tuple(e["loc"]))
        path = f"{prefix}.{path}" if prefix and path else (prefix or path)
        msg = "unknown field" if e["type"] == "extra_forbidden" else e["msg"]
        out.append(FieldError(path, msg))
    return out


def _framework_error(profile_name: str, detail: str) -> str:
    return f"initializing profiles: creating profile for scheduler name {profile_name}: {detail}"


def _wrap64(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


def _score_weights_overflow(plugins: Any) -> str:
    """getValidScoreWeights' int64 arithmetic: a negative weight wraps the running total. Where the weight
    that overflows is (`score.enabled[0]`), or ''."""
    seen: set[str] = set()
    total = 0
    entries = [(n.SCORE, i, p) for i, p in enumerate(plugins.score.enabled)]
    entries += [(n.MULTI_POINT, i, p) for i, p in enumerate(plugins.multiPoint.enabled)]
    negative = ""  # the first negative weight: what makes the total wrap
    for point, i, p in entries:
        if p.name not in _SCORE_PLUGINS or p.name in seen:
            continue
        seen.add(p.name)
        weighted = (p.weight or 1) * MAX_NODE_SCORE
        if weighted < 0 and not negative:
            negative = f"{point}.enabled[{i}]"
        if weighted > _wrap64(MAX_TOTAL_SCORE - total):
            return negative or f"{point}.enabled[{i}]"
        total = _wrap64(total + weighted)
    return ""


def _build_extenders(cfg: KubeSchedulerConfiguration) -> tuple[str, str] | None:
    """buildExtenders' effect on the configuration: a zero httpTimeout becomes 5s, and the managed
    resources the scheduler ignores replace NodeResourcesFit's ignoredResources in every profile.
    A CA with `insecure` is refused, as client-go's transport refuses it. (upstream's text, the field
    at fault) when it cannot be built."""
    ignored: list[str] = []
    for i, ext in enumerate(cfg.extenders):
        if parse_go_duration(ext.httpTimeout) == 0:
            ext.httpTimeout = DEFAULT_EXTENDER_TIMEOUT
        tls = ext.tlsConfig
        if tls is not None and tls.insecure and (tls.caData or tls.caFile):
            problem = (
                "couldn't build extenders: specifying a root certificates file with the insecure flag is not allowed"
            )
            return problem, f"extenders[{i}].tlsConfig.insecure"
        ignored += [r.name for r in ext.managedResources if r.ignoredByScheduler]
    if not ignored:
        return None
    for i, prof in enumerate(cfg.profiles):
        args = next((pc.args for pc in prof.pluginConfig if pc.name == n.NODE_RESOURCES_FIT), None)
        if not isinstance(args, NodeResourcesFitArgs):
            return (
                "couldn't build extenders: can't find NodeResourcesFitArgs in plugin config",
                f"profiles[{i}].pluginConfig",
            )
        args.ignoredResources = list(ignored)
    return None


def _framework_checks(cfg: KubeSchedulerConfiguration, release: Release = DEFAULT) -> tuple[str, str] | None:
    """What upstream refuses while building each profile's framework, as far as the configuration decides
    it: (upstream's text, the field at fault), or None."""
    queue_sort, queue_sort_args = "", None
    for i, prof in enumerate(cfg.profiles):
        at = f"profiles[{i}]"
        name = prof.schedulerName or ""
        plugins = prof.plugins
        assert plugins is not None
        if n.NODE_RESOURCES_FIT in enabled_plugin_names(plugins):
            j, fit = next(
                ((j, pc.args) for j, pc in enumerate(prof.pluginConfig) if pc.name == n.NODE_RESOURCES_FIT), (-1, None)
            )
            by_type = release.fit_ratio_checked_by_type
            errs = validate_fit_args("", fit, by_type) if isinstance(fit, NodeResourcesFitArgs) else []
            if errs:
                detail = aggregate([str(e) for e in errs])
                inner = f".{errs[0].path}" if errs[0].path else ""
                problem = _framework_error(name, f"initializing plugin {q(n.NODE_RESOURCES_FIT)}: {detail}")
                return problem, f"{at}.pluginConfig[{j}].args{inner}"
        for point in n.FRAMEWORK_POINT_ORDER:
            for k, p in enumerate(getattr(plugins, point).enabled):
                if p.name in LEGACY_ONLY_PLUGINS:
                    problem = _framework_error(name, f"{POINT_TYPE_NAMES[point]} {q(p.name)} does not exist")
                    return problem, f"{at}.plugins.{point}.enabled[{k}].name"
        for k, p in enumerate(plugins.multiPoint.enabled):
            if p.name in LEGACY_ONLY_PLUGINS:
                problem = _framework_error(name, f"{POINT_TYPE_NAMES[n.PRE_FILTER]} {q(p.name)} does not exist")
                return problem, f"{at}.plugins.multiPoint.enabled[{k}].name"
        for point in n.PLACEMENT_POINTS:
            for k, p in enumerate(getattr(plugins, point).enabled):
                kind = POINT_TYPE_NAMES[point]
                where = f"{at}.plugins.{point}.enabled[{k}].name"
                if p.name in PLACEMENT_PLUGINS[point]:
                    continue
                if p.name in UPSTREAM_ONLY_PLUGINS:
                    return _framework_error(name, f"{kind} {q(p.name)} is not implemented by kubesched"), where
                if p.name in _IN_TREE:
                    return _framework_error(name, f"plugin {q(p.name)} does not extend {kind} plugin"), where
                return _framework_error(name, f"{kind} {q(p.name)} does not exist"), where
        overflow = _score_weights_overflow(plugins)
        if overflow:
            problem = _framework_error(name, "score plugins: total score of Score plugins could overflow")
            return problem, f"{at}.plugins.{overflow}.weight"
        mine = _queue_sort_of(prof)
        mine_args = _plain(next((pc.args for pc in prof.pluginConfig if pc.name == mine), None))
        if not queue_sort:
            queue_sort, queue_sort_args = mine, mine_args
        elif mine and mine != queue_sort:
            detail = f"{q(name)}: {q(mine)}, first: {q(queue_sort)}"
            return (
                f"initializing profiles: different queue sort plugins for profile {detail}",
                f"{at}.plugins.queueSort",
            )
        elif mine_args != queue_sort_args:
            problem = f"initializing profiles: different queue sort plugin args for profile {q(name)}"
            return problem, f"{at}.pluginConfig"
    return None


def _plain(args: Any) -> Any:
    return args.model_dump() if isinstance(args, BaseModel) else args


def _queue_sort_of(prof: Any) -> str:
    """The queue sort plugin the framework will pick: the queueSort point's, else PrioritySort from multiPoint."""
    specific = prof.plugins.queueSort
    if specific.enabled:
        return str(specific.enabled[0].name)
    disabled = {p.name for p in specific.disabled}
    if "*" in disabled:
        return ""
    for p in prof.plugins.multiPoint.enabled:
        if p.name == n.PRIORITY_SORT and p.name not in disabled:
            return n.PRIORITY_SORT
    return ""


def defaulted_configuration(
    doc: dict[str, Any] | None, *, source: str = "", release: Release = DEFAULT
) -> KubeSchedulerConfiguration:
    """Decode and default, as upstream's codec does before validation; pluginConfig args come out typed."""
    unknown = release_unknown_fields(doc, release) if doc is not None else None
    if unknown is not None:
        at, problem = unknown
        raise ConfigError([FieldError(at, problem)], source, message=problem)
    try:
        normalised = decode_configuration(DEFAULT_DOCUMENT if doc is None else doc)
    except DecodeError as err:
        raise ConfigError([FieldError(err.field, str(err))], source, message=str(err), field=err.field) from err
    try:
        cfg = KubeSchedulerConfiguration.model_validate(normalised)
    except pydantic.ValidationError as err:  # decoding let through what the models refuse
        raise ConfigError(pydantic_errors(err), source) from err
    set_defaults(cfg, release)
    for prof in cfg.profiles:
        for pc in prof.pluginConfig:
            kind = ARGS_TYPES.get(pc.name)
            if kind is not None:
                typed = kind.model_validate(pc.args) if pc.args is not None else None
                pc.args = default_args(pc.name, typed, release)
    refused = release_decode_error(cfg, release)
    if refused is not None:
        at, problem = refused
        raise ConfigError([FieldError(at, problem)], source, message=problem, field=at)
    return cfg


def load_config(
    doc: dict[str, Any] | None, *, source: str = "", trust: Trust = UNTRUSTED, release: Release = DEFAULT
) -> SchedulerConfig:
    """Turn a parsed YAML document (or None for the defaults) into a SchedulerConfig.

    `trust` says where the document came from: only a configuration the user gave on purpose
    (`TRUSTED`) may name plugins by import path or extenders; anything else is refused here,
    before a profile is built or an extender probed. `release` is the kube-scheduler release
    whose defaults and checks apply (kubesched.release).
    """
    try:
        return _load_config(doc, source, trust, release)
    except ConfigError as err:  # in the release's words
        err.message = release.config_message(err.message)
        err.args = tuple(release.config_message(a) if isinstance(a, str) else a for a in err.args)
        raise


def _load_config(doc: dict[str, Any] | None, source: str, trust: Trust, release: Release) -> SchedulerConfig:
    cfg = defaulted_configuration(doc, source=source, release=release)
    errors = release_checks(cfg, release, validate_configuration(cfg))
    if errors:
        raise ConfigError(errors, source)
    found = _build_extenders(cfg) or _framework_checks(cfg, release)
    if found is not None:
        problem, at = found
        at = field_in_document(cfg, doc, at) if doc is not None else at
        raise ConfigError([FieldError(at, problem)], source, message=problem, field=at, framework=True)
    refused = refusal(cfg, trust)
    if refused is not None:
        at = field_in_document(cfg, doc, refused.field) if doc is not None else refused.field
        raise ConfigError([FieldError(at, refused.message)], source, message=refused.message, field=at, framework=True)
    profile_args = [{pc.name: pc.args for pc in prof.pluginConfig} for prof in cfg.profiles]
    return SchedulerConfig(cfg, profile_args, source, doc, trust, release)
