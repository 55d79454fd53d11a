"""Upstream's CEL table (dynamic-resource-allocation/cel/compile_test.go, v1.36), with DRAListTypeAttributes off as
v1.36 ships it: the list-attribute and `includes` cases need that alpha gate and are left out, and
DRAConsumableCapacity is on (beta), so `device.allowMultipleAllocations` is declared. Each case: the expression, the
device, and a compile error, an evaluation error or the match, and upstream's worst-case cost estimate."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.dra import cel

EXPENSIVE = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    ".all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, "
    "8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
ALL = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""


@dataclass
class Case:
    expression: str
    driver: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    capacity: dict[str, Any] = field(default_factory=dict)
    allow_multiple: bool = False
    compile_error: str = ""
    match_error: str = ""
    match: bool = False
    cost: int = 0


D = "dra.example.com"
CASES: dict[str, Case] = {
    "true": Case("true", match=True),
    "false": Case("false"),
    "syntax-error": Case("?!", compile_error="Syntax error"),
    "type-error": Case("1", compile_error="must evaluate to bool or the unknown type, not int"),
    "runtime-error-lookup-identifier": Case(
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
        cost=6,
    ),
    "runtime-error-lookup-map": Case(
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
        cost=6,
    ),
    "domain-check-negative": Case('"no-such-domain" in device.attributes', cost=3),
    "domain-check-positive": Case(
        '"dra.example.com" in device.attributes', attributes={f"{D}/something": {"bool": True}}, match=True, cost=3
    ),
    "empty-driver-name": Case('device.driver == ""', match=True, cost=2),
    "real-driver-name": Case('device.driver == "dra.example.com"', driver=D, match=True, cost=4),
    "driver-name-qualifier": Case(
        'device.attributes["dra.example.com"].name', driver=D, attributes={"name": {"bool": True}}, match=True, cost=4
    ),
    "driver-name-qualifier-map-lookup": Case(
        'device.attributes["dra.example.com"]["name"]',
        driver=D,
        attributes={"name": {"bool": True}},
        match=True,
        cost=4,
    ),
    "bind": Case(
        'cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
        driver=D,
        attributes={"name": {"bool": True}},
        match=True,
        cost=15,
    ),
    "qualified-attribute-name": Case(
        'device.attributes["other.example.com"].name',
        driver=D,
        attributes={"other.example.com/name": {"bool": True}},
        match=True,
        cost=4,
    ),
    "bool": Case(
        'device.attributes["dra.example.com"].name', driver=D, attributes={"name": {"bool": True}}, match=True, cost=4
    ),
    "int": Case(
        'device.attributes["dra.example.com"].name > 0', driver=D, attributes={"name": {"int": 1}}, match=True, cost=5
    ),
    "string": Case(
        'device.attributes["dra.example.com"].name == "fish"',
        driver=D,
        attributes={"name": {"string": "fish"}},
        match=True,
        cost=5,
    ),
    "attribute-access-causes-match-error": Case(
        'device.attributes["dra.example.com"].names',
        driver=D,
        attributes={"names": {"strings": ["fish", "bird"]}},
        match_error="attribute names: unsupported attribute value",
        cost=4,
    ),
    "includes-function-undeclared-error": Case(
        'device.attributes["dra.example.com"].name.includes("fish")',
        driver=D,
        compile_error="undeclared reference to 'includes'",
    ),
    "version": Case(
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        driver=D,
        attributes={"name": {"version": "1.0.0"}},
        match=True,
        cost=6,
    ),
    "version_v": Case(
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        driver=D,
        attributes={"name": {"version": "1.0.0"}},
        match=True,
        cost=7,
    ),
    "quantity": Case(
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        driver=D,
        capacity={"name": {"value": "1Mi"}},
        match=True,
        cost=6,
    ),
    "check-positive": Case(
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        driver=D,
        capacity={"name": {"value": "1Mi"}},
        match=True,
        cost=10,
    ),
    "check-negative": Case(
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        match=True,
        cost=11,
    ),
    "all": Case(
        ALL,
        driver=D,
        attributes={
            "bool": {"bool": True},
            "int": {"int": 1},
            "string": {"string": "fish"},
            "version": {"version": "1.0.0"},
        },
        capacity={"quantity": {"value": "1Mi"}},
        match=True,
        cost=52,
    ),
    "many": Case(
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
        'device.attributes["dra.example.com"].c',
        driver=D,
        attributes={"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}},
        match=True,
        cost=12,
    ),
    "check_attribute_domains": Case(
        'device.attributes.exists_one(x, x == "dra.example.com")',
        driver=D,
        attributes={"services": {"string": "some_example_value"}},
        match=True,
        cost=164,
    ),
    "check_attribute_ids": Case(
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        driver=D,
        attributes={"services": {"string": "some_example_value"}},
        match=True,
        cost=133,
    ),
    "split_attribute": Case(
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        driver=D,
        attributes={"services": {"string": "some_example_value"}},
        match=True,
        cost=19,
    ),
    "regexp_attribute": Case(
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        driver=D,
        attributes={"services": {"string": "asymetric"}},
        match=True,
        cost=18,
    ),
    "check_capacity_domains": Case(
        'device.capacity.exists_one(x, x == "dra.example.com")',
        driver=D,
        capacity={"memory": {"value": "1Mi"}},
        match=True,
        cost=164,
    ),
    "check_capacity_ids": Case(
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
        driver=D,
        capacity={"memory": {"value": "1Mi"}},
        match=True,
        cost=133,
    ),
    "expensive": Case(EXPENSIVE, driver=D, match_error="actual cost limit exceeded", cost=85555551),
    "allow_multiple_allocations": Case(
        "device.allowMultipleAllocations == true", driver=D, allow_multiple=True, match=True, cost=3
    ),
    "allow_multiple_allocations_default": Case(
        "device.allowMultipleAllocations == false", driver=D, match=True, cost=3
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_cel(name: str) -> None:
    case = CASES[name]
    result = cel.compile_expression(case.expression)
    if case.compile_error:
        assert result.error is not None
        assert case.compile_error in result.error.detail
        return
    assert result.error is None, result.error
    assert result.max_cost == case.cost
    device = cel.Device(case.driver, case.attributes, case.capacity, case.allow_multiple)
    if case.match_error:
        with pytest.raises(cel.EvalError, match=case.match_error):
            result.device_matches(device)
        return
    assert result.device_matches(device) is case.match


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (
            "device.foo == 1",
            "compilation failed: ERROR: <input>:1:7: undefined field 'foo'\n | device.foo == 1\n | ......^",
        ),
        ("foo", "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')"),
        ("device.driver.bar()", "ERROR: <input>:1:18: undeclared reference to 'bar' (in container '')"),
        (
            'quantity("1").isGreaterThan(1)',
            "ERROR: <input>:1:28: found no matching overload for 'isGreaterThan' applied to "
            "'kubernetes.Quantity.(int)'",
        ),
        ("device.driver", "must evaluate to bool or the unknown type, not string"),
        ('device.attributes["x"].y ++', "ERROR: <input>:1:27: Syntax error: mismatched input '+'"),
    ],
)
def test_compile_errors_are_upstreams(expression: str, message: str) -> None:
    """The texts kube-apiserver v1.36 answered for these selectors (probed with dry-run creates)."""
    result = cel.compile_expression(expression)
    assert result.error is not None and message in result.error.detail


def test_compiled_once_per_expression() -> None:
    assert cel.compile_expression("device.driver == 'x'") is cel.compile_expression("device.driver == 'x'")


@pytest.mark.parametrize(
    ("expression", "match"),
    [
        ('quantity("1") == quantity("1000m")', True),
        ('quantity("1Gi").compareTo(quantity("1G")) > 0', True),
        ('quantity("1").add(quantity("500m")).isGreaterThan(quantity("1"))', True),
        ('quantity("1.5").isInteger()', False),
        ('semver("1.2.3-alpha").isLessThan(semver("1.2.3"))', True),
        ('semver("1.10.0").compareTo(semver("1.9.9")) == 1', True),
        ('semver("2.3.4").major() == 2 && semver("2.3.4").minor() == 3 && semver("2.3.4").patch() == 4', True),
        ('isSemver("1.2")', False),
        ('isQuantity("1x")', False),
        ('"GPU".lowerAscii() == "gpu"', True),
        ('"a-b-c".split("-").size() == 3', True),
        ("[1, 2, 3].exists(x, x > 2) && [1, 2].all(x, x < 3) && [1, 2, 3].filter(x, x > 1).size() == 2", True),
        ('{"a": 1}.exists(k, k == "a") && [1, 2].map(x, x * 2)[1] == 4', True),
    ],
)
def test_kubernetes_libraries(expression: str, match: bool) -> None:
    result = cel.compile_expression(expression)
    assert result.error is None, result.error
    assert result.device_matches(cel.Device("x")) is match


def test_missing_domain_reads_as_empty_map() -> None:
    result = cel.compile_expression('device.attributes["other.example.com"].size() == 0')
    assert result.device_matches(cel.Device(D, {"model": {"string": "a"}})) is True


# Nesting and size: the thresholds kube-apiserver v1.36 answered when these were POSTed in DeviceClasses (the table in
# tests/hostile_cases.py checks a few of them against a live API server again).
RULES_TOO_DEEP = "compilation failed: ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
AST_TOO_DEEP = "compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded"


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ("(" * 249 + "true" + ")" * 249, None),
        ("(" * 250 + "true" + ")" * 250, RULES_TOO_DEEP),
        ("(" * 5000 + "true" + ")" * 5000, RULES_TOO_DEEP),
        ("(" * 248 + "device.driver == 'x'" + ")" * 248, None),
        ("(" * 249 + "device.driver == 'x'" + ")" * 249, RULES_TOO_DEEP),  # the right operand opens `relation` again
        ("(" * 249 + "[1].all(x, x > 0)" + ")" * 249, RULES_TOO_DEEP),
        ("[" * 249 + "true" + "]" * 249 + " == []", None),
        ("[" * 250 + "true" + "]" * 250 + " == []", RULES_TOO_DEEP),
        ("{1: " * 249 + "true" + "}" * 249 + " == {}", None),
        ("{1: " * 250 + "true" + "}" * 250 + " == {}", RULES_TOO_DEEP),
        ("size(" * 250 + "'a'" + ")" * 250 + " > 0", RULES_TOO_DEEP),
        ("true ? true : " * 249 + "true", None),
        ("true ? true : " * 250 + "true", RULES_TOO_DEEP),
        ("(1 + " * 124 + "1" + ")" * 124 + " > 0", None),
        ("(1 + " * 125 + "1" + ")" * 125 + " > 0", RULES_TOO_DEEP),
        ("1" + " + 1" * 249 + " > 0", None),
        ("1" + " + 1" * 250 + " > 0", AST_TOO_DEEP),
        ("1" + " + 1" * 248 + " > 0 == true", None),
        ("'a'" + ".lowerAscii()" * 249 + " == 'a'", None),
        ("'a'" + ".lowerAscii()" * 250 + " == 'a'", AST_TOO_DEEP),
        ("device" + "['a']" * 250 + " == 1", AST_TOO_DEEP),
        ("[1].map(x, x)" + " + [1]" * 249 + " == []", AST_TOO_DEEP),
        ("-(" * 126 + "1" + ")" * 126 + " > 0", None),
        ("!(" * 126 + "true" + ")" * 126, None),
        ("!" * 3000 + "true", None),
        ("true" + " && true" * 1000, None),
        ("false" + " || false" * 1000, None),
    ],
)
def test_nesting_limits_are_upstreams(expression: str, error: str | None) -> None:
    result = cel.compile_expression(expression)
    if error is None:
        assert result.error is None, result.error
        assert isinstance(result.device_matches(cel.Device(D)), bool)
    else:
        assert result.error is not None and result.error.detail == error


@pytest.mark.parametrize(
    ("expression", "match"),
    [
        ("!" * 3000 + "true", True),
        ("!" * 3001 + "true", False),
        ("-" * 2000 + "1 == 1", True),
        ("-" * 2001 + "1 == -1", True),
        ("true" + " && true" * 999 + " && false", False),
        ("false" + " || false" * 999 + " || device.driver == 'dra.example.com'", True),
        ("1 < 2" + " && device.attributes['x'].y" * 3 + " || true", True),  # errors absorbed as cel-go does
    ],
)
def test_collapsed_chains_keep_their_meaning(expression: str, match: bool) -> None:
    result = cel.compile_expression(expression)
    assert result.error is None, result.error
    assert result.device_matches(cel.Device(D)) is match


def test_deep_expressions_leave_the_recursion_limit_alone() -> None:
    """The limit is raised only while a deep expression runs: a high limit elsewhere would let C code overflow."""
    before = sys.getrecursionlimit()
    result = cel.compile_expression("(" * 248 + "device.driver == 'x'" + ")" * 248)
    assert result.error is None
    assert result.device_matches(cel.Device("x")) is True
    assert sys.getrecursionlimit() == before


def test_a_deadline_interrupts_an_evaluation() -> None:
    """Within the cost limit, and still seconds in celpy: past the deadline the evaluation stops, as cel-go's does
    when the context it was given ends."""
    ten = "[" + ", ".join(str(i) for i in range(10)) + "]"
    result = cel.compile_expression("".join(f"{ten}.all(x{i}, " for i in range(5)) + "true" + ")" * 5)
    assert result.error is None and result.max_cost < cel.EXPRESSION_MAX_COST
    started = time.monotonic()
    with pytest.raises(cel.EvalError, match="^operation interrupted$"):
        result.device_matches(cel.Device(D), deadline=started + 0.1)
    assert time.monotonic() - started < 1.0
    assert cel.compile_expression("[1, 2].all(x, x > 0)").device_matches(cel.Device(D), deadline=started + 60)


def test_nested_binds_get_room_for_their_rewriting() -> None:
    """celpy has no cel.bind: each becomes a one-element map, a few levels deeper than what was written."""
    result = cel.compile_expression("cel.bind(v, " * 124 + "device.driver == 'x'" + ", v)" * 124)
    assert result.error is None
    assert result.device_matches(cel.Device("x")) is True


def test_too_little_room_is_an_error_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should the room estimate ever fall short, the selector fails to match; RecursionError never escapes."""
    monkeypatch.setattr(cel, "_FRAMES_PER_LEVEL", 0)
    cel.compile_expression.cache_clear()
    try:
        result = cel.compile_expression("[" * 249 + "device.driver" + "]" * 249 + " == []")
        assert result.error is None or result.error.detail == AST_TOO_DEEP
        if result.error is None:
            with pytest.raises(cel.EvalError, match="actual cost limit exceeded"):
                result.device_matches(cel.Device("x"))
    finally:
        cel.compile_expression.cache_clear()


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ("device.driver.matches('(?<=a)b')", "ERROR: <input>:1:23: invalid matches argument"),
        ("device.driver.find('[') == ''", "program instantiation failed: error parsing regexp: missing ]: ["),
    ],
)
def test_constant_patterns_re2_refuses(expression: str, error: str) -> None:
    result = cel.compile_expression(expression)
    assert result.error is not None and error in result.error.detail


def test_patterns_run_in_linear_time() -> None:
    """Python's re would take ages on this device; RE2, like Go's regexp, answers at once."""
    result = cel.compile_expression("device.driver.matches('^(a+)+$') || device.driver.find('(a|aa)*c') != ''")
    assert result.error is None
    started = time.monotonic()
    assert result.device_matches(cel.Device("a" * 62 + "b")) is False
    assert time.monotonic() - started < 1.0


# Hostile expressions: whatever the nesting or text, compiling ends in a program or a clean error, and a program ends
# in a bool or an EvalError.

WRAPPERS = [
    ("(", ")"),
    ("!", ""),
    ("-", ""),
    ("[", "]"),
    ("{1: ", "}"),
    ("{", ": 1}"),
    ("size(", ")"),
    ("[1].all(x, ", ")"),
    ("[1, 2].map(x, ", ")"),
    ("true ? ", " : false"),
    ("true ? true : ", ""),
    ("1 + ", ""),
    ("(1 + ", ")"),
    ("dyn(", ")"),
    ("cel.bind(v, ", ", v)"),
    ("device.attributes[", "]"),
    ("!(", ")"),
    ("-(", ")"),
]
SUFFIXES = [".x", ".lowerAscii()", "[0]", "['k']", " + 1", " && true", " || false", " == 1", " * 2", " in [1]"]
CORES = ["true", "1", "'s'", "device", "device.driver", "device.attributes['dra.example.com'].model", "[]", "{}"]


@st.composite
def hostile_expressions(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(CORES) | st.text(max_size=40).map(lambda t: "'" + t.replace("'", "") + "'"))
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            text += draw(st.sampled_from(SUFFIXES)) * draw(st.integers(1, 300))
        else:
            prefix, suffix = draw(st.sampled_from(WRAPPERS))
            n = draw(st.integers(1, 300))
            text = prefix * n + text + suffix * n
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_expressions())
def test_hostile_expressions_end_cleanly(expression: str) -> None:
    before = sys.getrecursionlimit()
    result = cel.compile_expression(expression)
    assert sys.getrecursionlimit() == before
    if result.error is not None:
        assert result.error.kind in (cel.ErrorKind.INVALID, cel.ErrorKind.INTERNAL)
        assert result.error.detail and "Traceback" not in result.error.detail
        return
    device = cel.Device(D, {"model": {"string": "x" * 64}}, {"memory": {"value": "1Gi"}})
    try:
        assert isinstance(result.device_matches(device, deadline=time.monotonic() + 2), bool)
    except cel.EvalError as err:
        assert str(err)
    assert sys.getrecursionlimit() == before
