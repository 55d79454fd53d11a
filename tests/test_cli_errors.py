"""Unusable input exits 2 with a message naming file, document, object and field."""

import json
import os
import threading

import pytest

from kubesched.cli import main

NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}\n"


def run(tmp_path, capsys, text, *extra):
    f = tmp_path / "in.yaml"
    f.write_text(text)
    code = main(["simulate", str(f), "--output", "json", *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        pytest.param("a: [1, 2\n", ["in.yaml", "invalid YAML", "line"], id="bad YAML"),
        pytest.param(
            NODE + "---\napiVersion: v1\nkind: Gizmo\nmetadata: {name: g}\n",
            ["in.yaml, document 2", "Gizmo", "kind"],
            id="unknown kind",
        ),
        pytest.param(
            NODE + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: web-1}\nspec:\n  containers:\n"
            "  - name: c\n    resources: {requests: {cpu: 2x}}\n",
            [
                "in.yaml, document 2 (Pod default/web-1)",
                "spec.containers[0].resources.requests[cpu]",
                'Invalid value: "2x": quantities must match the regular expression',
            ],
            id="invalid quantity",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: lots}}\n",
            ["document 1 (Node n1)", "status.allocatable[cpu]"],
            id="invalid node quantity",
        ),
        pytest.param(
            NODE + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priorityClassName: nope}\n",
            ["(Pod default/p)", "spec.priorityClassName", "nope"],
            id="unknown priority class",
        ),
        pytest.param(
            NODE + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n    podAffinity:\n"
            "      requiredDuringSchedulingIgnoredDuringExecution:\n      - topologyKey: zone\n"
            "        labelSelector: {matchExpressions: [{key: a, operator: Near}]}\n",
            ["(Pod default/p)", "podAffinity", 'operator: Invalid value: "Near": not a valid selector operator'],
            id="malformed selector",
        ),
        pytest.param(
            NODE + "---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "parallelism: -1\n",
            ["document 2", "parallelism"],
            id="invalid config in a FILE",
        ),
        pytest.param("apiVersion: v1\nkind: Pod\nspec: {}\n", ["metadata.name", "Required value"], id="missing name"),
    ],
)
def test_bad_input_exits_2(tmp_path, capsys, text, needles):
    code, out, err = run(tmp_path, capsys, text)
    assert code == 2
    assert out == ""
    for n in needles:
        assert n in err, err


def test_config_flag_errors_name_the_file(tmp_path, capsys):
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    score:\n      enabled: [{name: NotAPlugin}]\n"
    )
    code, _, err = run(tmp_path, capsys, NODE, "--config", str(cfg))
    assert code == 2 and "NotAPlugin" in err


def test_pods_waiting_for_a_missing_claim_say_so(tmp_path, capsys):
    code, out, err = run(tmp_path, capsys, NODE)
    assert code == 0 and "warning" not in err
    claim_pod = "\n".join(
        [
            "---",
            "kind: Pod",
            "metadata: {name: gpu}",
            "spec:",
            "  resourceClaims: [{name: gpu, resourceClaimName: gpu-claim}]",
            "  containers: [{name: c, image: i}]",
        ]
    )
    code, out, err = run(tmp_path, capsys, NODE + claim_pod)
    assert code == 0 and "warning" not in err
    [pod] = json.loads(out)["pods"]
    # DynamicResources' PreEnqueue keeps it out of the queue until the claim exists, as upstream's.
    assert (pod["result"], pod["message"]) == ("Gated", 'could not find ResourceClaim "default/gpu-claim"')
    assert json.loads(out)["nodes"][0]["name"] == "n1"


@pytest.mark.parametrize("char", ["\x1e", "\x1c", "\x0b", "\x85", "\u2028", "\x07"])
def test_control_characters_from_the_input_are_escaped_in_one_line(tmp_path, capsys, char):
    escaped = char.encode("unicode_escape").decode()  # YAML's double-quoted escapes are Python's here
    code, out, err = run(tmp_path, capsys, f'apiVersion: "v1{escaped}"\nkind: Node\nmetadata: {{name: a}}\n')
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1, repr(err)
    assert "in.yaml, document 1 (Node a)" in err and "v1\\" in err


def test_a_pipe_is_read_like_a_file(tmp_path, capsys) -> None:
    """`kubesched simulate <(helm template ...)` hands over /dev/fd/N, a pipe: it is read as the file would be."""
    text = NODE + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n"
    plain = tmp_path / "in.yaml"
    plain.write_text(text)
    assert main(["simulate", str(plain), "--output", "json", "--seed", "1"]) == 0
    from_file = json.loads(capsys.readouterr().out)

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=(text,), daemon=True)
    writer.start()
    assert main(["simulate", str(fifo), "--output", "json", "--seed", "1"]) == 0
    writer.join(5)
    from_pipe = json.loads(capsys.readouterr().out)
    assert [(p["name"], p["node"]) for p in from_pipe["pods"]] == [(p["name"], p["node"]) for p in from_file["pods"]]
    assert from_pipe["pods"][0]["node"] == "n1"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_device_is_refused_not_read_forever(capsys) -> None:
    assert main(["simulate", "/dev/zero"]) == 2
    assert capsys.readouterr().err == "kubesched: /dev/zero: not a file, a directory or a pipe\n"
