"""kubesched run's command line: bad input exits 2 with a clear message; json logging."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import pytest

from kubesched.backend.kube.api import KubeAPI, load_configuration, server_url
from kubesched.cli import main
from kubesched.klog import JSONFormatter


def test_bad_config_exits_2_naming_the_field(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "leaderElection:\n  leaseDuration: 5s\n  renewDeadline: 10s\n"
    )
    assert main(["run", "--config", str(cfg), "--kubeconfig", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}: invalid KubeSchedulerConfiguration: leaderElection.leaseDuration" in err


def test_profile_errors_name_the_file_and_field(tmp_path: Path, kubeconfig: str, capsys) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "leaderElection: {leaderElect: false}\nprofiles:\n- plugins:\n    score:\n      enabled: [{name: Foo}]\n"
    )
    assert main(["run", "--config", str(cfg), "--kubeconfig", kubeconfig, "--secure-port", "0"]) == 2
    assert capsys.readouterr().err == (
        f"kubesched: {cfg}: profiles[0].plugins.score.enabled[0].name: initializing profiles: creating profile for "
        'scheduler name default-scheduler: ScorePlugin "Foo" does not exist\n'
    )


def test_unreadable_kubeconfig_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["run", "--kubeconfig", str(tmp_path / "missing"), "--secure-port", "0"]) == 2
    assert "kubesched: cannot reach the cluster:" in capsys.readouterr().err


def test_bad_lease_flag_is_refused(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--leader-elect-lease-duration", "soon"])
    assert exit_.value.code == 2
    assert "invalid duration" in capsys.readouterr().err


def test_json_log_lines() -> None:
    record = logging.LogRecord("kubesched.app", logging.ERROR, __file__, 1, "leaderelection %s", ("lost",), None)
    doc = json.loads(JSONFormatter().format(record))
    assert (doc["level"], doc["logger"], doc["msg"]) == ("ERROR", "kubesched.app", "leaderelection lost")


@pytest.mark.parametrize("case", ["port in use", "unreadable certificate", "certificate directory", "no key"])
def test_a_secure_port_that_cannot_be_served_exits_1_saying_why(
    tmp_path: Path, kubeconfig: str, caplog: pytest.LogCaptureFixture, case: str
) -> None:
    """As kube-scheduler: `"command failed" err="failed to create listener: failed to listen on ADDR: ..."` and
    status 1, not an internal error."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    port = held.getsockname()[1]
    args = ["run", "--kubeconfig", kubeconfig, "--leader-elect=false", "--bind-address", "127.0.0.1"]
    if case == "port in use":
        args += ["--secure-port", str(port)]
        expected = f"failed to create listener: failed to listen on 127.0.0.1:{port}: address already in use"
    elif case == "no key":
        args += ["--secure-port", str(_free_port()), "--tls-cert-file", str(tmp_path / "serving.crt")]
        expected = "missing filename for serving cert"
    elif case == "certificate directory":
        args += ["--secure-port", str(_free_port()), "--cert-dir", "/proc/no-such-dir"]
        expected = "error creating self-signed certificates: /proc/no-such-dir: no such file or directory"
    else:
        bad = tmp_path / "bad.crt"
        bad.write_text("not a certificate")
        args += ["--secure-port", str(_free_port()), "--tls-cert-file", str(bad), "--tls-private-key-file", str(bad)]
        expected = f"unable to load the serving certificate {bad} (key {bad}): "
    try:
        with caplog.at_level(logging.ERROR):
            assert main(args) == 1
    finally:
        held.close()
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any(m.startswith('"command failed" err="' + expected) for m in messages), messages
    assert not any("internal error" in m for m in messages)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("port", "message"),
    [
        ("99999", "--secure-port 99999 must be between 1 and 65535, inclusive. It cannot be turned off with 0"),
        ("-5", "--secure-port -5 must be between 0 and 65535, inclusive. 0 for turning off secure port"),
        ("x", "invalid int value: 'x'"),
    ],
)
def test_a_secure_port_out_of_range_is_refused_in_upstreams_words(port: str, message: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--secure-port", port])
    assert exit_.value.code == 2
    assert f"argument --secure-port: {message}" in capsys.readouterr().err


@pytest.mark.parametrize(("kind", "reason"), [("empty", "is empty"), ("directory", "is a directory")])
def test_a_kubeconfig_that_is_no_kubeconfig_exits_2_saying_why(tmp_path: Path, kind: str, reason: str, capsys) -> None:
    path = tmp_path / "kubeconfig"
    if kind == "empty":
        path.write_text("")
    else:
        path.mkdir()
    assert main(["run", "--kubeconfig", str(path), "--secure-port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched: cannot reach the cluster:") and reason in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--kube-api-burst", "0"],
            "burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0",
        ),
        (["--master", "not a url"], "host must be a URL or a host:port pair: 'not a url'"),
        (["--master", "https://h:99999"], "host must be a URL or a host:port pair: 'https://h:99999'"),
        (["--master", "https://h:6443/path"], "host must be a URL or a host:port pair: 'https://h:6443/path'"),
    ],
)
def test_client_settings_no_client_can_use_exit_2_in_client_gos_words(
    kubeconfig: str, flags: list[str], message: str, capsys
) -> None:
    """kube-scheduler refuses these as it makes its clients ("command failed", status 1); here they are bad input."""
    assert main(["run", "--kubeconfig", kubeconfig, "--secure-port", "0", "--leader-elect=false", *flags]) == 2
    assert capsys.readouterr().err == f"kubesched: {message}\n"


@pytest.mark.parametrize(
    ("master", "url"),
    [("127.0.0.1:6443", "https://127.0.0.1:6443"), ("http://h", "http://h"), ("https://h:6443/", "https://h:6443")],
)
def test_master_takes_a_url_or_a_host_port_pair(master: str, url: str) -> None:
    assert server_url(master) == url


def test_qps_0_needs_no_burst() -> None:
    """With no rate limit (qps 0) client-go takes any burst, and so does kubesched."""
    api = KubeAPI(load_configuration(master="https://127.0.0.1:1"), qps=0, burst=0)
    assert api.limiter.qps == 0


@pytest.mark.parametrize("command", ["run", "simulate", "snapshot"])
def test_a_negative_verbosity_is_refused(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([command, "-v", "-3"])
    assert exit_.value.code == 2
    assert "argument -v/--v: -3: the log verbosity is 0 or more" in capsys.readouterr().err
