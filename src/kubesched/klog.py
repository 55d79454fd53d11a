"""klog's verbosity levels and structured messages, on Python's logging.

Upstream logs `logger.V(n).Info("message", "key", value, ...)` and shows it from `--v=n` on. Here
V(n) is the logging level `INFO - n` (V(0) is INFO, V(10) is DEBUG), `-v=N` sets the level to
`INFO - N`, and a `Message` carries the key/value pairs: klog's text (`"message" key="value" n=3`)
when formatted as a string, the pairs themselves for a structured (JSON) formatter.
"""

from __future__ import annotations

import json
import logging


def V(n: int) -> int:  # noqa: N802 - klog's name
    """The logging level of klog's V(n)."""
    return logging.INFO - n


def level_for(verbosity: int) -> int:
    """The logging level that shows what `--v=verbosity` shows upstream."""
    return max(1, logging.INFO - max(0, verbosity))


def verbosity_of(level: int) -> int | None:
    """n for a V(n) level between INFO and DEBUG (exclusive), else None: its record shows as INFO."""
    return logging.INFO - level if logging.DEBUG < level < logging.INFO else None


class Message:
    """A klog structured message; rendered only when a handler emits it."""

    __slots__ = ("text", "values")

    def __init__(self, text: str, **values: object) -> None:
        self.text = text
        self.values = values

    def __str__(self) -> str:
        return " ".join([json.dumps(self.text), *(f"{k}={_value(v)}" for k, v in self.values.items())])


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    return json.dumps(str(v))


def info(logger: logging.Logger, level: int, text: str, **values: object) -> None:
    """`logger.V(n).Info(text, key, value, ...)`: nothing is built unless the level is on."""
    if logger.isEnabledFor(level):
        logger.log(level, Message(text, **values))
