"""A `kubesched run` app in a thread of the test, so a test can watch what it writes and stop it."""

from __future__ import annotations

import threading

from kubesched.app import SchedulerApp


class AppThread:
    """Runs `app` until `stop`; `code` is what its run returned (None while it runs)."""

    def __init__(self, app: SchedulerApp, *, start: bool = True) -> None:
        self.app = app
        self.code: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        if start:
            self.thread.start()

    def _run(self) -> None:
        self.code = self.app.run()

    def stop(self, timeout: float = 30.0) -> int | None:
        self.app.stop.set()
        self.app.store.wake.set()
        self.thread.join(timeout)
        return self.code
