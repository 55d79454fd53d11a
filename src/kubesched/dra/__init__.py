"""Dynamic resource allocation, as k8s.io/dynamic-resource-allocation: CEL device selectors (cel.py), and what the
scheduler and simulator read from ResourceClaims (claims.py)."""
