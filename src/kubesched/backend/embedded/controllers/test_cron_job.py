"""Schedules as robfig/cron's standard parser reads them, and the tick a CronJob starts at a given moment."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kubesched.apiserver.cron_schedule import ScheduleError, parse_schedule, time_zone
from kubesched.backend.embedded.controllers.cron_job import most_recent_tick, sync

NOW = datetime(2026, 1, 1, 0, 0, tzinfo=UTC)  # a Thursday


@pytest.mark.parametrize(
    ("schedule", "now", "tick"),
    [
        ("*/5 * * * *", datetime(2026, 1, 1, 0, 7, 30, tzinfo=UTC), datetime(2026, 1, 1, 0, 5, tzinfo=UTC)),
        ("0 3 * * *", NOW, datetime(2025, 12, 31, 3, 0, tzinfo=UTC)),
        ("30 6-16/4 * * 1-5", NOW, datetime(2025, 12, 31, 14, 30, tzinfo=UTC)),  # Wednesday's last
        ("0 0 * * sun", NOW, datetime(2025, 12, 28, 0, 0, tzinfo=UTC)),
        ("0 12 1 jan,jul *", NOW, datetime(2025, 7, 1, 12, 0, tzinfo=UTC)),
        # Day of month and day of week both restricted: either matches (the 13th, or any Friday).
        ("0 0 13 * 5", datetime(2026, 1, 10, tzinfo=UTC), datetime(2026, 1, 9, tzinfo=UTC)),
        # Day of week a star: the day of month alone decides.
        ("0 0 13 * *", datetime(2026, 1, 10, tzinfo=UTC), datetime(2025, 12, 13, tzinfo=UTC)),
        ("@hourly", datetime(2026, 1, 1, 5, 59, tzinfo=UTC), datetime(2026, 1, 1, 5, 0, tzinfo=UTC)),
        ("@yearly", NOW, NOW),
        ("@every 90m", NOW, NOW),
        ("0 0 29 2 *", NOW, datetime(2024, 2, 29, tzinfo=UTC)),
        ("0 0 30 2 *", NOW, None),
    ],
)
def test_most_recent_tick(schedule: str, now: datetime, tick: datetime | None) -> None:
    assert most_recent_tick(parse_schedule(schedule), now) == tick


@pytest.mark.parametrize(
    ("schedule", "error"),
    [
        ("61 * * * *", "end of range (61) above maximum (59): 61"),
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("x * * * *", "failed to parse int from x"),
        ("0 0 * * 7", "end of range (7) above maximum (6): 7"),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ],
)
def test_schedules_refused(schedule: str, error: str) -> None:
    with pytest.raises(ScheduleError) as err:
        parse_schedule(schedule)
    assert str(err.value) == error


def test_time_zones() -> None:
    assert time_zone(None) is UTC
    assert str(time_zone("Europe/Paris")) == "Europe/Paris"
    for name, message in (
        ("", "timeZone must be nil or non-empty string"),
        ("Local", "timeZone must be an explicit time zone"),
        ("Mars/Olympus", "unknown time zone Mars/Olympus"),
    ):
        with pytest.raises(ValueError, match=message):
            time_zone(name)


def cron(**spec: object) -> dict[str, object]:
    return {
        "kind": "CronJob",
        "metadata": {"name": "c", "namespace": "ns", "uid": "u"},
        "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {}}, **spec},
    }


def job(name: str, finished: bool = False) -> dict[str, object]:
    status = {"conditions": [{"type": "Complete", "status": "True"}]} if finished else {}
    return {"kind": "Job", "metadata": {"name": name, "namespace": "ns"}, "status": status}


@pytest.mark.parametrize(
    ("policy", "jobs", "created", "deleted"),
    [
        pytest.param("Allow", [job("old")], ["c-29453760"], [], id="allow: another one"),
        pytest.param("Forbid", [job("old")], [], [], id="forbid: wait for the active one"),
        pytest.param("Forbid", [job("old", finished=True)], ["c-29453760"], [], id="forbid: the old one finished"),
        pytest.param("Replace", [job("old")], ["c-29453760"], ["old"], id="replace the active one"),
        pytest.param("Allow", [job("c-29453760")], [], [], id="this tick's Job exists"),
    ],
)
def test_concurrency(policy: str, jobs: list[dict[str, object]], created: list[str], deleted: list[str]) -> None:
    plan = sync(cron(concurrencyPolicy=policy), jobs, NOW)
    assert [j["metadata"]["name"] for j in plan.create] == created
    assert [j["metadata"]["name"] for j in plan.delete] == deleted
