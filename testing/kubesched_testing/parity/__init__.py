"""Parity with upstream: the same decisions asked of real kube-scheduler v1.36 and of kubesched.

`families` generates seeded clusters, `upstream` plays them on a real control plane
with upstream's scheduler, `ours` replays each decision on the state upstream saw,
and `compare` says where the two differ.
"""
