"""Shadowing and recording a real cluster, read-only: `kubesched shadow` and `kubesched record`."""
