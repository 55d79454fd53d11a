"""Errors a backend raises where the API server would answer 404 or 409."""

from kubesched.api.errors import ConflictError

__all__ = ["ConflictError"]
