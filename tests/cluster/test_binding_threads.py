"""The binding threads of `kubesched run`: jobs run concurrently, shutdown waits for or drops the queued ones."""

from __future__ import annotations

import threading
from collections.abc import Callable

from kubesched.app import BindingThreads


def _direct(job: Callable[[], None]) -> None:
    job()


def test_every_job_runs_and_as_many_at_once_as_there_are_threads() -> None:
    size = 8
    together = threading.Barrier(size, timeout=5)
    ran: list[int] = []
    lock = threading.Lock()

    def job(i: int) -> Callable[[], None]:
        def run() -> None:
            together.wait()  # breaks (and the test fails) unless `size` jobs are in flight at once
            with lock:
                ran.append(i)

        return run

    threads = BindingThreads(size, _direct)
    for i in range(3 * size):
        threads.submit(job(i))
    threads.shutdown(wait=True)
    assert sorted(ran) == list(range(3 * size))
    assert not together.broken


def test_jobs_go_through_the_runner() -> None:
    seen: list[str] = []

    def runner(job: Callable[[], None]) -> None:
        seen.append("runner")
        job()

    threads = BindingThreads(2, runner)
    threads.submit(lambda: seen.append("job"))
    threads.shutdown(wait=True)
    assert seen == ["runner", "job"]


def test_shutdown_without_waiting_drops_the_jobs_not_started() -> None:
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def blocking() -> None:
        started.set()
        release.wait(5)
        ran.append("first")

    threads = BindingThreads(1, _direct)
    threads.submit(blocking)
    assert started.wait(5)
    threads.submit(lambda: ran.append("queued"))
    threads.shutdown(wait=False)
    release.set()
    threads.shutdown(wait=True)  # joins the thread; the drop stays in force
    assert ran == ["first"]
