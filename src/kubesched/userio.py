"""What a command shows its user and writes for them: one-line messages, exit statuses, files written whole.

Every command (run, simulate, snapshot, whatif, sweep) speaks the same way: a message on
standard error prefixed with `kubesched: `, exit status 2 for bad input and 1 for a failure of
ours, and an output file that is either the whole answer or untouched. This module imports
nothing of kubesched, so commands at any layer can use it.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
from collections.abc import Callable
from typing import TextIO

EXIT_BAD_INPUT = 2
EXIT_INTERNAL_ERROR = 1


# Control characters a user's input may carry (other than newline and tab), escaped as Go's %q does,
# so one message stays one line where it should (str.splitlines splits at \x1c-\x1e, \x85, \u2028 too).
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x09), *range(0x0B, 0x20), 0x7F, 0x85)} | {
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def say(message: str) -> None:
    """A message for the user on standard error, prefixed with the command's name."""
    print("kubesched: " + message.translate(_ESCAPES), file=sys.stderr)


def silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


class AtomicFile:
    """A file written whole or not at all: a temporary file beside it, made at once (so a path that cannot
    be written fails before any work) and renamed over it at the end. Raises OSError naming the reason."""

    def __init__(self, path: str) -> None:
        real = os.path.realpath(path)  # through a symbolic link: the file it names is replaced
        if os.path.isdir(real):
            raise IsADirectoryError(errno.EISDIR, "Is a directory")
        parent = os.path.dirname(real) or "."
        if not os.path.isdir(parent):
            reason = "No such directory" if not os.path.exists(parent) else "Not a directory"
            raise FileNotFoundError(errno.ENOENT, f"{reason}: {os.path.dirname(path) or parent}")
        if os.path.exists(real) and not os.access(real, os.W_OK):
            raise PermissionError(errno.EACCES, "Permission denied")
        mode = stat.S_IMODE(os.stat(real).st_mode) if os.path.exists(real) else 0o666
        self.path = real
        self.temp = os.path.join(parent, f".{os.path.basename(real)}.{secrets.token_hex(4)}.tmp")
        fd = os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        os.close(fd)
        if os.path.exists(real):
            os.chmod(self.temp, mode)

    def write(self, fill: Callable[[TextIO], None]) -> None:
        with open(self.temp, "w", encoding="utf-8") as f:
            fill(f)
        os.replace(self.temp, self.path)

    def discard(self) -> None:
        """Remove the temporary file unless it became the target."""
        try:
            os.unlink(self.temp)
        except FileNotFoundError:
            pass
