"""Status: the result vocabulary every extension point speaks (staging framework/interface.go)."""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    def __str__(self) -> str:
        return _CODE_NAMES[self]


_CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


class Status:
    """Code plus reasons; `None` stands for Success wherever a Status is returned."""

    __slots__ = ("code", "reasons", "err", "plugin")

    def __init__(self, code: Code = Code.SUCCESS, *reasons: str, err: BaseException | None = None) -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.err = err
        self.plugin = ""

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def message(self) -> str:
        msg = ", ".join(self.reasons)
        if self.err is not None:
            return f"{self.err}, {msg}" if msg else str(self.err)
        return msg

    def as_error(self) -> BaseException | None:
        if self.code in (Code.SUCCESS, Code.WAIT, Code.SKIP):
            return None
        return self.err if self.err is not None else RuntimeError(self.message())

    def __eq__(self, other: object) -> bool:
        if other is None:
            return self.code == Code.SUCCESS
        if not isinstance(other, Status):
            return NotImplemented
        if self.code != other.code or self.reasons != other.reasons:
            return False
        return (self.err is None) == (other.err is None) and str(self.err) == str(other.err)

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))

    def __repr__(self) -> str:
        extra = f", plugin={self.plugin!r}" if self.plugin else ""
        err = f", err={self.err!r}" if self.err is not None else ""
        return f"Status(code={self.code!s}, reasons={list(self.reasons)!r}{err}{extra})"


def as_status(err: BaseException) -> Status:
    return Status(Code.ERROR, err=err)


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code


def status_message(status: Status | None) -> str:
    return "" if status is None else status.message()
