"""Errors a backend raises where the API server would answer 404 or 409."""


class ConflictError(RuntimeError):
    """The object changed or vanished (HTTP 409/404 in a real cluster)."""
