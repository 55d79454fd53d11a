"""The CronJob controller (pkg/controller/cronjob), at one moment: the Job it starts for its latest tick.

Nothing recurs on the virtual clock: when a CronJob is created (or changed), it starts
the Job for the most recent time its schedule names, at or before now (in
`spec.timeZone`, UTC by default), unless it is suspended, `status.lastScheduleTime`
shows that tick already started, `startingDeadlineSeconds` has passed since it, or
`concurrencyPolicy: Forbid` meets an active Job (`Replace` deletes the active Jobs
first). The Job is `<cronjob>-<scheduled time in minutes since the epoch>`, with the
jobTemplate's labels and annotations and `batch.kubernetes.io/cronjob-scheduled-timestamp`.

Schedules are robfig/cron's standard format, as the API server accepts them: five
fields (minute, hour, day of month, month, day of week) with `*`, `?`, ranges, steps,
lists and month and day names, or `@yearly`, `@annually`, `@monthly`, `@weekly`,
`@daily`, `@midnight`, `@hourly`, `@every <duration>` (whose tick is now).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from kubesched.api.object import Obj, ObjView
from kubesched.apiserver.cron_schedule import Schedule, parse_schedule, time_zone
from kubesched.backend.embedded.controllers.controller_utils import (
    Plan,
    controller_ref,
    is_being_deleted,
    meta,
    name_of,
    namespace_of,
    parse_time,
    spec,
)
from kubesched.backend.embedded.controllers.job import is_finished

SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
_SEARCH_DAYS = 5 * 366  # robfig/cron gives up after five years


def most_recent_tick(schedule: Schedule, now: datetime) -> datetime | None:
    """The latest minute at or before `now` (in now's zone) that the schedule names; None within five years."""
    if schedule.every is not None:
        return now
    local = now.replace(second=0, microsecond=0)
    day = local.replace(hour=0, minute=0)
    for back in range(_SEARCH_DAYS):
        d = day - timedelta(days=back)
        if d.month not in schedule.months or not schedule.day_matches(d):
            continue
        for hour in sorted(schedule.hours, reverse=True):
            if back == 0 and hour > local.hour:
                continue
            for minute in sorted(schedule.minutes, reverse=True):
                if back == 0 and hour == local.hour and minute > local.minute:
                    continue
                return d.replace(hour=hour, minute=minute)
    return None


def job_name(cj: ObjView, scheduled: datetime) -> str:
    return f"{name_of(cj)}-{int(scheduled.timestamp()) // 60}"


def new_job(cj: ObjView, scheduled: datetime) -> Obj:
    """getJobFromTemplate2."""
    template = spec(cj).get("jobTemplate") or {}
    annotations = dict(meta(template).get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP] = scheduled.isoformat().replace("+00:00", "Z")
    job_meta: Obj = {"name": job_name(cj, scheduled), "namespace": namespace_of(cj)}
    if meta(template).get("labels"):
        job_meta["labels"] = dict(meta(template)["labels"])
    job_meta["annotations"] = annotations
    job_meta["ownerReferences"] = [controller_ref(cj)]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": copy.deepcopy(dict(spec(template)))}


def sync(cj: ObjView, jobs: Sequence[ObjView], now: datetime, job_exists: bool | None = None) -> Plan:
    """The Job for the latest tick (and the active Jobs it replaces), plus the CronJob with lastScheduleTime set.

    `jobs` are the Jobs the CronJob owns; `job_exists` says whether the tick's Job name is taken.
    """
    cj_spec = spec(cj)
    if cj_spec.get("suspend") is True or is_being_deleted(cj) or not isinstance(cj_spec.get("schedule"), str):
        return Plan()
    try:
        schedule = parse_schedule(cj_spec["schedule"])
        zone = time_zone(cj_spec.get("timeZone"))
    except ValueError:
        return Plan()
    tick = most_recent_tick(schedule, now.astimezone(zone))
    if tick is None:
        return Plan()
    last = parse_time((cj.get("status") or {}).get("lastScheduleTime"))
    if last is not None and last >= tick:
        return Plan()
    deadline = cj_spec.get("startingDeadlineSeconds")
    if isinstance(deadline, int) and (now - tick).total_seconds() > deadline:
        return Plan()
    if job_exists or any(name_of(j) == job_name(cj, tick) for j in jobs):
        return Plan()
    active = [j for j in jobs if not is_finished(j) and not is_being_deleted(j)]
    policy = cj_spec.get("concurrencyPolicy") or "Allow"
    if policy == "Forbid" and active:
        return Plan()
    plan = Plan(create=[new_job(cj, tick)], delete=active if policy == "Replace" else [])
    updated = copy.deepcopy(dict(cj))
    updated.setdefault("status", {})["lastScheduleTime"] = tick.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    plan.update.append(updated)
    return plan
