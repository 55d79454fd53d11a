"""Feature gates the scheduler's behaviour depends on, with kube-scheduler v1.36's defaults.

Only gates kubesched implements both ways are known here; naming any other is an error,
so a gate the user expects to change something never silently changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kubesched.api.errors import FieldError

OPPORTUNISTIC_BATCHING: Final = "OpportunisticBatching"

# gate -> on by default in v1.36
DEFAULTS: Final[Mapping[str, bool]] = {
    OPPORTUNISTIC_BATCHING: True,  # beta in v1.36
}


def parse_feature_gates(text: str, flag: str = "--feature-gates") -> dict[str, bool]:
    """`A=true,B=false` over the defaults; a malformed item or an unknown gate raises FieldError naming `flag`."""
    gates = dict(DEFAULTS)
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or value.strip().lower() not in ("true", "false"):
            raise FieldError(flag, f'invalid value "{item}": want NAME=true|false')
        if key not in gates:
            raise FieldError(flag, f"unrecognized feature gate: {key} (known: {', '.join(sorted(gates))})")
        gates[key] = value.strip().lower() == "true"
    return gates


def enabled(gates: Mapping[str, bool], name: str) -> bool:
    """A gate's value in `gates`, else its v1.36 default."""
    return gates.get(name, DEFAULTS[name])
