"""klog's verbosity levels and structured messages, on Python's logging.

Upstream logs `logger.V(n).Info("message", "key", value, ...)` and shows it from `--v=n` on. Here
V(n) is the logging level `INFO - n` (V(0) is INFO, V(10) is DEBUG), `-v=N` sets the level to
`INFO - N`, and a `Message` carries the key/value pairs: klog's text (`"message" key="value" n=3`)
when formatted as a string, the pairs themselves for a structured (JSON) formatter.
"""

from __future__ import annotations

import json
import logging
from typing import Any


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


class TextFormatter(logging.Formatter):
    """Log lines without Python tracebacks (only the exception's message), unless -v=4 or more asks for them."""

    def __init__(self, fmt: str, tracebacks: bool = False) -> None:
        super().__init__(fmt)
        self.tracebacks = tracebacks

    def formatException(self, ei: Any) -> str:
        if self.tracebacks:
            return super().formatException(ei)
        return f"  error: {ei[1]}" if ei and ei[1] is not None else ""

    def format(self, record: logging.LogRecord) -> str:
        if verbosity_of(record.levelno) is not None:
            record.levelname = "INFO"  # V(n) lines are klog's Info lines
        return super().format(record)


class JSONFormatter(logging.Formatter):
    """--logging-format=json: one object a line, with klog's field names."""

    def __init__(self, tracebacks: bool = False) -> None:
        super().__init__()
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        v = verbosity_of(record.levelno)
        level = "INFO" if v is not None else record.levelname
        doc: dict[str, object] = {"ts": record.created, "level": level, "logger": record.name}
        if v is not None:
            doc["v"] = v
        if isinstance(record.msg, Message) and not record.args:
            doc["msg"] = record.msg.text
            doc.update({k: x if isinstance(x, int | float | bool) else str(x) for k, x in record.msg.values.items()})
        else:
            doc["msg"] = record.getMessage()
        if record.exc_info:
            error = record.exc_info[1]
            doc["err"] = self.formatException(record.exc_info) if self.tracebacks else str(error)
        return json.dumps(doc)
