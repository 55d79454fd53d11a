"""CronJob schedules as the API server parses and checks them: robfig/cron's standard format and `spec.timeZone`.

Validation refuses a CronJob whose schedule or zone these reject, and the CronJob
controller finds its ticks with the parsed Schedule; it lives here, below both, so the
API server stand-in does not import the embedded cluster's controllers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kubesched.api.duration import parse_duration

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
