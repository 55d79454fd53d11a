"""Pods that a Permit plugin told to wait (framework/runtime/waiting_pods_map.go).

Each waiting plugin has its own timeout; the pod proceeds when every one of them
allows it and fails as soon as one rejects it or times out. The outcome is handed to
the binding cycle, which was parked on it.
"""

from __future__ import annotations

from collections.abc import Callable

from kubesched.clock import Timer, VirtualClock
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo


def go_duration(seconds: float) -> str:
    """time.Duration's String(): 10s, 1m30s, 500ms."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:g}ms"
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    out = ""
    if h:
        out += f"{int(h)}h"
    if h or m:
        out += f"{int(m)}m"
    return out + f"{s:g}s"


class WaitingPod:
    def __init__(
        self,
        pod: PodInfo,
        timeouts: dict[str, float],
        clock: VirtualClock,
        on_done: Callable[[Status | None], None],
    ) -> None:
        self.pod = pod
        self.pending: set[str] = set(timeouts)
        self._on_done = on_done
        self._finished = False
        self._timers: list[Timer] = [clock.call_later(t, self._timeout(plugin, t)) for plugin, t in timeouts.items()]

    def _timeout(self, plugin: str, after: float) -> Callable[[], None]:
        return lambda: self.reject(
            plugin, f"rejected due to timeout after waiting {go_duration(after)} at plugin {plugin}"
        )

    def allow(self, plugin: str) -> None:
        self.pending.discard(plugin)
        if not self.pending:
            self._finish(None)

    def reject(self, plugin: str, message: str) -> None:
        self._finish(Status(Code.UNSCHEDULABLE, message).with_plugin(plugin))

    def _finish(self, status: Status | None) -> None:
        if self._finished:
            return
        self._finished = True
        for t in self._timers:
            t.cancel()
        self._on_done(status)
