"""A stand-in API server and a kubesched app against it, on loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.app import RunOptions, SchedulerApp
from kubesched.backend.kube.reflector import Backoff
from kubesched.config.load import load_config
from kubesched.config.trust import TRUSTED
from kubesched_testing.apiserver import FakeAPIServer
from kubesched_testing.app_thread import AppThread


@pytest.fixture
def apiserver() -> Iterator[FakeAPIServer]:
    server = FakeAPIServer(bookmark_interval=0.2).start()
    yield server
    server.stop()


@pytest.fixture
def kubeconfig(apiserver: FakeAPIServer, tmp_path: Path) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(apiserver.kubeconfig())
    return str(path)


def fast_backoff() -> Backoff:
    return Backoff(initial=0.05, cap=0.5, jitter=0.0)


@pytest.fixture
def start_app(kubeconfig: str) -> Iterator[Callable[..., AppThread]]:
    running: list[AppThread] = []

    def start(config: dict[str, Any] | None = None, **kw: Any) -> AppThread:
        kw.setdefault("secure_port", -1)
        kw.setdefault("leader_elect", False)
        kw.setdefault("qps", 0)
        kw.setdefault("informer_backoff", fast_backoff)
        app = SchedulerApp(load_config(config, trust=TRUSTED), RunOptions(kubeconfig=kubeconfig, **kw))
        r = AppThread(app)
        running.append(r)
        return r

    yield start
    for r in running:
        r.stop(10.0)
