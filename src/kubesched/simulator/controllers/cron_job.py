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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kubesched.api.duration import parse_duration
from kubesched.api.object import Obj, ObjView
from kubesched.simulator.controllers.controller_utils import (
    Plan,
    controller_ref,
    is_being_deleted,
    meta,
    name_of,
    namespace_of,
    parse_time,
    spec,
)
from kubesched.simulator.controllers.job import is_finished

SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)}
_DAYS = {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_SEARCH_DAYS = 5 * 366  # robfig/cron gives up after five years


class ScheduleError(ValueError):
    """A schedule robfig/cron's standard parser refuses; the message is its reason."""


@dataclass(frozen=True, slots=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool  # day of month was * or ?
    any_weekday: bool
    every: float | None = None  # @every: seconds between ticks

    def day_matches(self, t: datetime) -> bool:
        """robfig's dayMatches: both fields must match when either is `*`, else either may."""
        dom = t.day in self.days
        dow = (t.weekday() + 1) % 7 in self.weekdays
        if self.any_day or self.any_weekday:
            return dom and dow
        return dom or dow


def _number(text: str, names: Mapping[str, int]) -> int:
    if text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise ScheduleError(f"failed to parse int from {text}")
    return int(text)


def _field(text: str, low: int, high: int, names: Mapping[str, int]) -> tuple[frozenset[int], bool]:
    """One field: its values and whether it was a bare `*`/`?` (robfig's star bit)."""
    values: set[int] = set()
    star = False
    for part in text.split(","):
        range_part, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit():
                raise ScheduleError(f"failed to parse int from {step_text}")
            step = int(step_text)
            if step == 0:
                raise ScheduleError(f"step of range should be a positive number: {part}")
        if range_part in ("*", "?"):
            start, end = low, high
            star = star or step == 1
        else:
            first, dash, last = range_part.partition("-")
            start = _number(first, names)
            end = _number(last, names) if dash else (high if step_text else start)
        if start < low:
            raise ScheduleError(f"beginning of range ({start}) below minimum ({low}): {part}")
        if end > high:
            raise ScheduleError(f"end of range ({end}) above maximum ({high}): {part}")
        if start > end:
            raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {part}")
        values.update(range(start, end + 1, step))
    return frozenset(values), star


def parse_schedule(text: str) -> Schedule:
    """cron.ParseStandard."""
    text = text.strip()
    if text.startswith("@every "):
        try:
            every = parse_duration(text[len("@every ") :].strip())
        except ValueError as err:
            raise ScheduleError(f"failed to parse duration {text}: {err}") from err
        if every <= 0:
            raise ScheduleError(f"failed to parse duration {text}")
        full = frozenset({0})
        return Schedule(full, full, full, full, full, True, True, every=max(every, 1.0))
    if text.startswith("@"):
        if text not in _DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {text}")
        text = _DESCRIPTORS[text]
    fields = text.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    minutes, _ = _field(fields[0], 0, 59, {})
    hours, _ = _field(fields[1], 0, 23, {})
    days, any_day = _field(fields[2], 1, 31, {})
    months, _ = _field(fields[3], 1, 12, _MONTHS)
    weekdays, any_weekday = _field(fields[4], 0, 6, _DAYS)
    return Schedule(minutes, hours, days, months, weekdays, any_day, any_weekday)


def time_zone(name: str | None) -> tzinfo:
    """The CronJob's zone; ValueError with the API server's reason when it cannot be used."""
    if name is None:
        return UTC
    if name == "":
        raise ValueError("timeZone must be nil or non-empty string")
    if name.lower() == "local":
        raise ValueError("timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as err:
        raise ValueError(f"unknown time zone {name}") from err


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
