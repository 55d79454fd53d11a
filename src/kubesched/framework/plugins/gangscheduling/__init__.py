"""GangScheduling: a PodGroup with a gang policy is scheduled all or nothing (v1.36, alpha)."""
