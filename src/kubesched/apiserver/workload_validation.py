"""The API server's validation of workloads, for what their controllers read (apps and batch validation, v1.36).

Replica counts, selectors that must exist, be non-empty and select the template's
labels, the pod management and completion modes, a CronJob's schedule and time zone.
As elsewhere, what no controller or scheduler reads may be left out: a workload
without a pod template is not checked against one (it makes no pods), and a template
need not name a restart policy, but one it names must suit the kind. The pods a
template makes are checked as pods by the loader (backend/embedded/controllers:
template_problems), with the template's path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api import field
from kubesched.api.object import Obj
from kubesched.api.selectors import SelectorError, parse_label_selector, validate_label_selector, validate_labels
from kubesched.apiserver.cron_schedule import ScheduleError, parse_schedule, time_zone

Errors = list[str]
MAX_PODS = 100_000
"""The most pods one workload may ask for (replicas, parallelism): kubesched's bound, not the API server's, so a
stray `replicas: 2147483647` ends in a clear error instead of a simulation that never finishes."""
_TZ_PREFIXES = ("TZ=", "CRON_TZ=")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _nonnegative(spec: Mapping[str, Any], key: str, path: str) -> Errors:
    value = _int(spec.get(key))
    return [field.invalid(path, value, "must be greater than or equal to 0")] if value is not None and value < 0 else []


def _pod_count(spec: Mapping[str, Any], key: str, path: str) -> Errors:
    """A non-negative count of pods, within what kubesched simulates."""
    value = _int(spec.get(key))
    if value is not None and value > MAX_PODS:
        return [field.invalid(path, value, f"kubesched simulates at most {MAX_PODS} pods per workload")]
    return _nonnegative(spec, key, path)


def _template(spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    template = spec.get("template")
    return template if isinstance(template, Mapping) else None


def _template_labels(template: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()}


def _selects_template(selector: Any, template: Mapping[str, Any], path: str) -> Errors:
    """The selector must match the template's labels (an unparseable one was reported already)."""
    try:
        parsed = parse_label_selector(selector if isinstance(selector, Mapping) else None)
    except SelectorError:
        return []
    if selector is not None and parsed.is_everything:
        return []
    labels = _template_labels(template)
    if parsed.matches(labels):
        return []
    return [field.invalid(f"{path}.template.metadata.labels", labels, "`selector` does not match template `labels`")]


def _required_selector(spec: Mapping[str, Any], what: str) -> Errors:
    selector = spec.get("selector")
    if selector is None:
        return [field.required("spec.selector")]
    errs = validate_label_selector(selector, "spec.selector")
    if isinstance(selector, Mapping) and not (selector.get("matchLabels") or selector.get("matchExpressions")):
        errs.append(field.invalid("spec.selector", selector, f"empty selector is invalid for {what}"))
    return errs


def _restart_policy(template: Mapping[str, Any], path: str, allowed: tuple[str, ...]) -> Errors:
    policy = (template.get("spec") or {}).get("restartPolicy")
    if policy is None or policy in allowed:
        return []
    if allowed == ("Always",):
        return [field.not_supported(f"{path}.template.spec.restartPolicy", policy, allowed)]
    if policy in ("Always", ""):
        quoted = ", ".join(f'"{p}"' for p in allowed)
        return [field.required(f"{path}.template.spec.restartPolicy", f"valid values: {quoted}")]
    return [field.not_supported(f"{path}.template.spec.restartPolicy", policy, allowed)]


def _replicated(what: str) -> Callable[[Obj], Errors]:
    """ValidateDeploymentSpec and ValidateReplicaSetSpec, for what the controllers read."""

    def check(obj: Obj) -> Errors:
        spec = obj.get("spec") or {}
        template = _template(spec)
        errs = _pod_count(spec, "replicas", "spec.replicas")
        if template is None:
            return errs + validate_label_selector(spec.get("selector"), "spec.selector")
        errs += _required_selector(spec, what)
        errs += _selects_template(spec.get("selector"), template, "spec")
        return errs + _restart_policy(template, "spec", ("Always",))

    return check


def validate_replication_controller(obj: Obj) -> Errors:
    spec = obj.get("spec") or {}
    errs = _pod_count(spec, "replicas", "spec.replicas")
    errs += validate_labels(spec.get("selector"), "spec.selector")
    template = _template(spec)
    selector = spec.get("selector") or {}
    if template is not None and isinstance(selector, Mapping):
        labels = _template_labels(template)
        if not selector:
            errs.append(field.required("spec.selector"))
        elif any(labels.get(str(k)) != str(v) for k, v in selector.items()):
            errs.append(
                field.invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")
            )
        errs += _restart_policy(template, "spec", ("Always",))
    return errs


def validate_stateful_set(obj: Obj) -> Errors:
    spec = obj.get("spec") or {}
    errs: Errors = []
    policy = spec.get("podManagementPolicy")
    if policy not in (None, "OrderedReady", "Parallel"):
        errs.append(field.invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    errs += _pod_count(spec, "replicas", "spec.replicas")
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, Mapping):
        errs += _nonnegative(ordinals, "start", "spec.ordinals.start")
    template = _template(spec)
    if template is None:
        return errs + validate_label_selector(spec.get("selector"), "spec.selector")
    errs += _required_selector(spec, "statefulset")
    errs += _selects_template(spec.get("selector"), template, "spec")
    return errs + _restart_policy(template, "spec", ("Always",))


def validate_daemon_set(obj: Obj) -> Errors:
    spec = obj.get("spec") or {}
    template = _template(spec)
    if template is None:
        return validate_label_selector(spec.get("selector"), "spec.selector")
    selector = spec.get("selector")
    errs = validate_label_selector(selector, "spec.selector")
    errs += _selects_template(selector, template, "spec")
    if isinstance(selector, Mapping) and not (selector.get("matchLabels") or selector.get("matchExpressions")):
        errs.append(field.invalid("spec.selector", selector, "empty selector is invalid for daemonset"))
    return errs + _restart_policy(template, "spec", ("Always",))


def _job_spec(spec: Mapping[str, Any], path: str) -> Errors:
    """validateJobSpec, for what the Job controller reads."""
    errs = _pod_count(spec, "parallelism", f"{path}.parallelism")
    errs += _nonnegative(spec, "completions", f"{path}.completions")
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        errs.append(field.not_supported(f"{path}.completionMode", mode, ("NonIndexed", "Indexed")))
    if mode == "Indexed" and spec.get("completions") is None:
        errs.append(field.required(f"{path}.completions", "when completion mode is Indexed"))
    template = _template(spec)
    if template is not None:
        errs += _restart_policy(template, path, ("OnFailure", "Never"))
    return errs


def validate_job(obj: Obj) -> Errors:
    spec = obj.get("spec") or {}
    errs = _job_spec(spec, "spec")
    template = _template(spec)
    if spec.get("manualSelector") is True and template is not None:
        selector = spec.get("selector")
        if selector is None:
            errs.append(field.required("spec.selector"))
        else:
            errs += validate_label_selector(selector, "spec.selector")
        errs += _selects_template(selector, template, "spec")
    return errs


def validate_cron_job(obj: Obj) -> Errors:
    spec = obj.get("spec") or {}
    errs: Errors = []
    schedule = spec.get("schedule")
    if not schedule:
        errs.append(field.required("spec.schedule"))
    else:
        text = str(schedule)
        if text.startswith(_TZ_PREFIXES):
            text = text.split(None, 1)[1] if " " in text.strip() else ""
        try:
            parse_schedule(text)
        except ScheduleError as err:
            errs.append(field.invalid("spec.schedule", schedule, str(err)))
        if "TZ" in str(schedule):
            errs.append(
                field.invalid(
                    "spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
                )
            )
    errs += _nonnegative(spec, "startingDeadlineSeconds", "spec.startingDeadlineSeconds")
    if "timeZone" in spec:
        try:
            time_zone(spec["timeZone"])
        except ValueError as err:
            errs.append(field.invalid("spec.timeZone", spec["timeZone"], str(err)))
    policy = spec.get("concurrencyPolicy")
    if policy is not None and policy not in ("Allow", "Forbid", "Replace"):
        errs.append(field.not_supported("spec.concurrencyPolicy", policy, ("Allow", "Forbid", "Replace")))
    job_template = spec.get("jobTemplate")
    job_spec = (job_template.get("spec") or {}) if isinstance(job_template, Mapping) else {}
    errs += _job_spec(job_spec, "spec.jobTemplate.spec")
    if job_spec.get("selector") is not None:
        errs.append(
            field.invalid("spec.jobTemplate.spec.selector", job_spec["selector"], "`selector` will be auto-generated")
        )
    return errs


VALIDATORS: dict[str, Callable[[Obj], Errors]] = {
    "Deployment": _replicated("deployment"),
    "ReplicaSet": _replicated("deployment"),
    "ReplicationController": validate_replication_controller,
    "StatefulSet": validate_stateful_set,
    "DaemonSet": validate_daemon_set,
    "Job": validate_job,
    "CronJob": validate_cron_job,
}
