"""The error a profile that cannot become a framework raises, apart from the runtime so that the command
line can catch it without importing the framework (and `kubesched run` can start its informers first)."""

from __future__ import annotations


class FrameworkError(ValueError):
    """A profile that cannot be turned into a framework; `field` says where in the profile (or, once the
    scheduler adds the profile's index, in the configuration), e.g. `plugins.score.enabled[0].name`."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field

    def located(self, source: str) -> str:
        """The message as a user reads it: the configuration's file (unless the message starts with it), the
        field, then upstream's text; every route that builds a scheduler says it this way."""
        text = str(self)
        prefix = f"{source}: " if source and not text.startswith(source) else ""
        field = f"{self.field}: " if self.field else ""
        return f"{prefix}{field}{text}"
