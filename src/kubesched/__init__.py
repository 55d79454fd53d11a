"""kubesched: Kubernetes' kube-scheduler rebuilt in Python.

`kubesched.simulate(...)` runs the simulator from Python (docs/python-api.md); it is
imported on first use, so `kubesched run` starts without the simulator's modules.
"""

from typing import TYPE_CHECKING, Any

from kubesched.config.load import SchedulerConfig, load_config
from kubesched.framework.status import Code, Status
from kubesched.scheduler import Scheduler

if TYPE_CHECKING:
    from kubesched.simulator.api import InputError, Simulation, simulate

__all__ = ["Code", "InputError", "Scheduler", "SchedulerConfig", "Simulation", "Status", "load_config", "simulate"]

_SIMULATOR_NAMES = ("InputError", "Simulation", "simulate")


def __getattr__(name: str) -> Any:
    if name in _SIMULATOR_NAMES:
        from kubesched.simulator import api

        return getattr(api, name)
    raise AttributeError(f"module 'kubesched' has no attribute {name!r}")
