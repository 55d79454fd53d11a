"""CycleState: per-attempt scratch space, written in PreFilter/PreScore and read later.

State objects should implement `clone()`; read-only ones return themselves so that the
preemption dry run and nominated-pod passes can copy a state cheaply.
"""

from __future__ import annotations

from typing import Any, Protocol


class StateData(Protocol):
    def clone(self) -> StateData: ...


class StateNotFound(KeyError):
    pass


class CycleState:
    __slots__ = (
        "_data",
        "skip_filter_plugins",
        "skip_score_plugins",
        "skip_pre_bind_plugins",
        "pods_to_activate",
        "pod_group_cycle",
    )

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        self.pods_to_activate: dict[str, Any] = {}
        # The state of the pod-group cycle this pod's trial belongs to (SetPodGroupSchedulingCycle): shared by
        # the group's members until binding starts, None outside a group cycle.
        self.pod_group_cycle: CycleState | None = None

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise StateNotFound(key) from None

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState()
        c._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.pod_group_cycle = self.pod_group_cycle
        return c


def once(state: CycleState, key: str, compute: Any) -> Any:
    """What `compute()` returns, worked out once per cycle: for values a Score needs on every node
    of a plugin that has no PreScore to prepare them."""
    try:
        return state.read(key)
    except StateNotFound:
        value = compute()
        state.write(key, value)
        return value


# How each upstream plugin words a state its PreFilter or PreScore did not write (a profile that enables
# the plugin at Filter or Score alone); "{key}" is the state's key.
FAILED_TO_READ = 'failed to read "{key}" from cycleState: not found'
READING = 'reading "{key}" from cycleState: not found'
ERROR_READING = 'error reading "{key}" from cycleState: not found'
ERROR_READING_CYCLE_STATE = 'error reading "{key}" from cycle-state: not found'
CANNOT_READ = 'cannot read "{key}" from cycleState'
NOT_FOUND = "not found"


def read_state(state: CycleState, key: str, kind: type, missing: str = FAILED_TO_READ) -> Any:
    """Typed read with upstream's error text for a missing (in the plugin's words) or mistyped entry."""
    try:
        value = state.read(key)
    except StateNotFound as err:
        raise RuntimeError(missing.format(key=key)) from err
    if not isinstance(value, kind):
        raise RuntimeError(f"{value!r} convert to {kind.__name__} error")
    return value
