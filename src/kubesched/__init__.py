"""kubesched: Kubernetes' kube-scheduler rebuilt in Python."""

from kubesched.config.load import SchedulerConfig, load_config
from kubesched.framework.status import Code, Status
from kubesched.scheduler import Scheduler

__all__ = ["Code", "Scheduler", "SchedulerConfig", "Status", "load_config"]
