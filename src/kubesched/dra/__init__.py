"""Dynamic resource allocation, as k8s.io/dynamic-resource-allocation: CEL device selectors (cel.py), what the
scheduler and simulator read from ResourceClaims (claims.py), and the structured-parameters allocator
(allocator.py, with pools.py, constraints.py, capacity.py) that picks devices for a pod's claims on a node."""
