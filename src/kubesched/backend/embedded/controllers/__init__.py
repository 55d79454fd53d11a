"""Workload controllers for the embedded cluster: Deployments, ReplicaSets, ReplicationControllers, StatefulSets,
DaemonSets, Jobs and CronJobs become the pods their kube-controller-manager controllers would create; the
resourceclaim controller (resource_claim.py) makes pods' ResourceClaims from their templates and releases them;
the ephemeral volume controller (ephemeral_volume.py) makes the PVCs of pods' generic ephemeral volumes.

One module per controller, named after upstream's (pkg/controller/<name>), each a pure
`sync` from a workload and what it owns to a Plan (objects to create, update, delete);
`manager.py` runs them on the embedded cluster and collects garbage. docs/workloads.md
lists what each one does and where it differs from upstream.

What the API server does to a workload on create, and the check of its pod template,
are in create.py. This package module imports nothing, so that a controller importing
a sibling (`from kubesched.backend.embedded.controllers import job`) never runs into a module
that imports it back.
"""
