"""`kubesched run`'s delegated authentication and authorization flags: bad ones exit 2 saying which and why."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from kubesched.cli import main


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--authorization-always-allow-paths=/healthz,/a*b", 'only trailing * allowed in "a*b"'),
        ("--client-ca-file={tmp}/missing.crt", "unable to load client CA provider: open {tmp}/missing.crt: no such"),
        ("--client-ca-file={tmp}/not.pem", 'error loading CA bundle for "client-ca-bundle::{tmp}/not.pem"'),
        (
            "--authentication-kubeconfig={tmp}/missing",
            "failed to get delegated authentication kubeconfig: {tmp}/missing",
        ),
        (
            "--authorization-kubeconfig={tmp}/not.pem",
            "delegated authorization kubeconfig: {tmp}/not.pem: not a kubeconfig",
        ),
    ],
)
def test_bad_delegation_flags_exit_2(flag: str, message: str, kubeconfig: str, tmp_path: Path, capsys) -> None:
    (tmp_path / "not.pem").write_text("not a certificate\n")
    args = ["run", "--kubeconfig", kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1"]
    args += ["--secure-port", str(_free_port()), flag.format(tmp=tmp_path)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched: ") and message.format(tmp=tmp_path) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "flag",
    ["--authentication-token-webhook-cache-ttl=soon", "--authentication-skip-lookup=maybe"],
)
def test_unparsable_values_are_refused_by_the_parser(flag: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", flag])
    assert exit_.value.code == 2 and flag.split("=")[0] in capsys.readouterr().err


def test_flags_read_as_pflag_reads_them() -> None:
    from kubesched.cli import _delegation_options, _parser

    args = _parser().parse_args(
        [
            "run",
            "--authentication-skip-lookup",
            "--authentication-tolerate-lookup-failure=false",
            "--authorization-always-allow-paths=",
            "--authorization-webhook-cache-authorized-ttl=1m",
        ]
    )
    opts = _delegation_options(args)
    assert opts.skip_lookup and not opts.tolerate_lookup_failure
    assert opts.always_allow_paths == () and opts.allowed_cache_ttl == 60.0 and opts.denied_cache_ttl == 10.0
    defaults = _delegation_options(_parser().parse_args(["run"]))
    assert defaults.always_allow_paths == ("/healthz", "/readyz", "/livez") and defaults.tolerate_lookup_failure
