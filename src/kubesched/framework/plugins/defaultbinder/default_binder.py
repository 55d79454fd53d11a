"""DefaultBinder: binds through the backend, as upstream POSTs a Binding (defaultbinder/default_binder.go)."""

from __future__ import annotations

from typing import Any, Final

from kubesched.config import names
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import BindPlugin, Handle
from kubesched.framework.status import Status, as_status
from kubesched.framework.types import PodInfo

NAME: Final = names.DEFAULT_BINDER


class DefaultBinder(BindPlugin):
    NAME = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        try:
            self._handle.api_client().bind(pod, node_name)
        except Exception as err:  # the backend's failure is the binding's failure
            return as_status(err)
        return None


def new(args: Any, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
