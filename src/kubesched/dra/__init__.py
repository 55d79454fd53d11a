"""Dynamic resource allocation (resource.k8s.io/v1): devices, claims and their allocation."""
