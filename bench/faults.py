"""The fault suite against a real v1.36 API server: kubesched and upstream kube-scheduler side by side.

    export KUBESCHED_K8S_ASSETS=$(../shared/k8s/install.sh)
    python3 bench/faults.py [--scheduler kubesched|upstream|both] [--scenario NAME ...] [--nodes N]

Scenarios (testing/kubesched_testing/faults.py): restart (API server down 10 s),
compaction (etcd compacted, watches come back to 410), dropped (every third
binding's answer lost after the server applied it, through a loopback proxy),
rival (another client binds pending pods meanwhile), kill (SIGKILL, then a new
process), leader (two replicas with leader election, the first killed).
Each ends with checks through the API; exit status 1 when any check fails for kubesched.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from kubesched.backend.kube.api import KubeAPI, load_configuration

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))  # kubesched_testing: not in the wheel
from kubesched_testing.controlplane import ControlPlaneError, control_plane  # noqa: E402
from kubesched_testing.faults import SCENARIOS, SCHEDULERS, run_scenario, table  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scheduler", choices=(*SCHEDULERS, "both"), default="both")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS)
    parser.add_argument("--nodes", type=int, default=12)
    args = parser.parse_args()
    which = SCHEDULERS if args.scheduler == "both" else (args.scheduler,)
    work = Path(tempfile.mkdtemp(prefix="kubesched-faults-"))
    figures = []
    try:
        with control_plane(work / "cp") as cp:
            api = KubeAPI(load_configuration(str(cp.kubeconfig_path)), qps=0)
            for scenario in args.scenario or SCENARIOS:
                for w in which:
                    fig = run_scenario(cp, api, w, scenario, work / f"{scenario}-{w}", nodes=args.nodes)
                    figures.append(fig)
                    verdict = "ok" if fig.ok else "FAILED"
                    print(f"{scenario} {w}: {verdict} {fig.notes[:3]}", file=sys.stderr, flush=True)
    except ControlPlaneError as err:
        print(f"faults: {err}", file=sys.stderr)
        return 2
    print(table(figures))
    print(f"\nlogs under {work}")
    return 0 if all(f.ok for f in figures if f.scheduler == "kubesched") else 1


if __name__ == "__main__":
    sys.exit(main())
