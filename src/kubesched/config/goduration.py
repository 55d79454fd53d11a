"""Go's time.Duration as the config API reads and writes it (metav1.Duration).

A configuration spells durations the way time.ParseDuration accepts them and the
effective configuration prints them the way Duration.String does ("10m0s"), so both
sides are exact integer nanoseconds here, never floats.
"""

from __future__ import annotations

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
_MAX = (1 << 63) - 1

_UNITS = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "\u00b5s": MICROSECOND,  # micro sign
    "\u03bcs": MICROSECOND,  # Greek mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}


def go_quote(text: str) -> str:
    """strconv.Quote for the characters config values hold."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) > 0xFF else f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _digits(s: str, i: int) -> tuple[int, int, int]:
    """The run of decimal digits at i: (value, digit count, next index)."""
    start, value = i, 0
    while i < len(s) and "0" <= s[i] <= "9":
        value = value * 10 + ord(s[i]) - 48
        i += 1
    return value, i - start, i


def parse_go_duration(text: str) -> int:
    """time.ParseDuration: nanoseconds, or ValueError with Go's message."""
    orig, s = text, text
    invalid = ValueError("time: invalid duration " + go_quote(orig))
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise invalid
    total, i = 0, 0
    while i < len(s):
        if not (s[i] == "." or "0" <= s[i] <= "9"):
            raise invalid
        whole, n_whole, i = _digits(s, i)
        frac, scale, n_frac = 0, 1, 0
        if i < len(s) and s[i] == ".":
            frac_start = i + 1
            j = frac_start
            while j < len(s) and "0" <= s[j] <= "9":
                if frac <= _MAX // 10:  # Go stops gathering precision before it overflows
                    frac = frac * 10 + ord(s[j]) - 48
                    scale *= 10
                j += 1
            n_frac, i = j - frac_start, j
        if n_whole == 0 and n_frac == 0:
            raise invalid
        u = i
        while i < len(s) and s[i] != "." and not ("0" <= s[i] <= "9"):
            i += 1
        unit_name = s[u:i]
        if not unit_name:
            raise ValueError("time: missing unit in duration " + go_quote(orig))
        unit = _UNITS.get(unit_name)
        if unit is None:
            raise ValueError(f"time: unknown unit {go_quote(unit_name)} in duration {go_quote(orig)}")
        if whole > (1 << 63) // unit:
            raise invalid
        value = whole * unit
        if frac:
            value += int(float(frac) * (float(unit) / scale))
        total += value
        if total > (1 << 63):
            raise invalid
    if neg:
        return -total
    if total > _MAX:
        raise invalid
    return total


def _frac(v: int, prec: int) -> str:
    """v in units of 10^-prec, as Go prints it: no trailing zeros, no lone dot."""
    whole, rest = divmod(v, 10**prec)
    if rest == 0:
        return str(whole)
    return f"{whole}." + f"{rest:0{prec}d}".rstrip("0")


def format_go_duration(ns: int) -> str:
    """Duration.String: "0s", "500ms", "1.5s", "10m0s", "1h0m0s"."""
    if ns == 0:
        return "0s"
    sign, u = ("-" if ns < 0 else ""), abs(ns)
    if u < SECOND:
        if u < MICROSECOND:
            return f"{sign}{u}ns"
        if u < MILLISECOND:
            return f"{sign}{_frac(u, 3)}\u00b5s"
        return f"{sign}{_frac(u, 6)}ms"
    out = _frac(u % MINUTE, 9) + "s"
    minutes = u // MINUTE
    if minutes:
        out = f"{minutes % 60}m" + out
        hours = minutes // 60
        if hours:
            out = f"{hours}h" + out
    return sign + out


def canonical(text: str) -> str:
    """The Go spelling of a valid duration: "1m" becomes "1m0s"."""
    return format_go_duration(parse_go_duration(text))
