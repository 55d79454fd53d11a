"""kubesched: Kubernetes' kube-scheduler rebuilt in Python.

The names below are imported on first use, so that `import kubesched` costs nothing
and `kubesched run` imports only what its start needs: `kubesched.simulate(...)` runs
the simulator from Python (docs/python-api.md); `Scheduler`, `load_config` and the
status types are the scheduler's own.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.config.load import SchedulerConfig, load_config
    from kubesched.framework.status import Code, Status
    from kubesched.scheduler import Scheduler
    from kubesched.simulator.api import InputError, Simulation, simulate

__all__ = ["Code", "InputError", "Scheduler", "SchedulerConfig", "Simulation", "Status", "load_config", "simulate"]

_HOMES = {
    "Code": "kubesched.framework.status",
    "InputError": "kubesched.simulator.api",
    "Scheduler": "kubesched.scheduler",
    "SchedulerConfig": "kubesched.config.load",
    "Simulation": "kubesched.simulator.api",
    "Status": "kubesched.framework.status",
    "load_config": "kubesched.config.load",
    "simulate": "kubesched.simulator.api",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'kubesched' has no attribute {name!r}")
    return getattr(import_module(home), name)
