"""--kubernetes-version and --feature-gates as every command reads them: one release, or one per side.

The command line (`run`, `ui`) and the simulate-side commands (`simulate`, `whatif`, `sweep`)
resolve the flags the same way: a refused value becomes a LoadError that names its flag, so
each command reports it as bad input (exit status 2).
"""

from __future__ import annotations

from kubesched.apiserver.documents import LoadError
from kubesched.release import Release, ReleaseError, release, snapshot_version
from kubesched.userio import say


def followed_release(
    version: str | None, feature_gates: str, recorded: tuple[str, str] | None = None, *, say_warnings: bool = True
) -> Release:
    """The release a command follows: `version`, else the one a snapshot `recorded` (said once), else the newest.

    A simulation lists the gates' warnings among its own, so it passes say_warnings=False.
    """
    chosen, note = snapshot_version(version, recorded)
    if note is not None:
        say(note)
    try:
        followed = release(chosen, feature_gates)
    except ReleaseError as err:
        raise LoadError(f"{err.flag}: {err}") from err
    if say_warnings:
        for warning in followed.warnings:
            say(f"warning: --feature-gates: {warning}")
    return followed


def compared_releases(versions: list[str], feature_gates: str) -> list[Release]:
    """whatif compare's --kubernetes-version, once per side, with --feature-gates on both."""
    try:
        return [release(v, feature_gates) for v in versions]
    except ReleaseError as err:
        raise LoadError(f"{err.flag}: {err}") from err
