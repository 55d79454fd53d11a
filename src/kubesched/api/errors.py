"""Errors about user input that name the field at fault."""

from __future__ import annotations


class FieldError(ValueError):
    """A value at `path` that kubesched cannot use."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.detail = message


class ConflictError(RuntimeError):
    """The object changed or vanished (HTTP 409/404 in a real cluster); backends raise it, plugins catch it."""
