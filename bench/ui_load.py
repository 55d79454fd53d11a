"""How long `kubesched ui` takes to show a large cluster: server start to the first page rendered in chromium.

    python3 bench/ui_load.py [--nodes 5000] [--pods 50000] [--runs 1]

Writes one YAML file (a `kind: List`): nodes of 4 CPU and 32Gi in three zones, pods of
100m-500m CPU, and 20 pods of 8 CPU that fit nowhere (so there are pending pods to ask
about). Then, separately:

- simulate: `kubesched.simulate(FILE, seed=1, record=False)` in this process (wall and CPU s);
- load: `kubesched ui FILE --port 0 --no-open` started at t0; the time its URL line
  appears (read, simulate, serve), then Debian's headless chromium (launched before t0,
  as a user's browser already runs) opens the page until the Cluster tab is fully drawn
  (`body[data-ready]`: summary, zones, the node picture of every node, the first page
  of the node table); the server's CPU seconds (from /proc) at each step, its peak RSS;
- in the page: the pending pods list, a pending pod's plugin table the first time
  (a run that records it and a batch of pending pods) and a second pending pod (kept),
  and "add node like this one" (a whole re-simulation).

With `--first-page` (issue 34 item 3), on bench/realistic.py's cluster (2,000 nodes and 20,000 pods by
default) instead: the CPU seconds of the plain run, `kubesched simulate FILE --seed 1 --output table` in a
child (os.wait4), against the `kubesched ui` server's CPU seconds from its start until chromium has drawn
the Cluster tab and fetched everything the first page asks for (network idle); their ratio is
`first_page_ratio`, the bar being 1.2.

    python3 bench/ui_load.py --first-page [--nodes 2000] [--pods 20000] [--runs 2]

Wall seconds depend on the machine's load; say so when quoting them. Run by hand, not in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))  # kubesched_testing: not in the wheel
from kubesched_testing.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402 - after the paths to this tree

TIMEOUT_MS = 600_000


def cluster(nodes: int, pods: int) -> dict[str, Any]:
    rng = random.Random(1)
    items: list[dict[str, Any]] = []
    for i in range(nodes):
        name = f"node-{i:05d}"
        labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{'abc'[i % 3]}"}
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
            }
        )
    for j in range(pods):
        cpu = "8" if j % max(1, pods // 20) == 0 else f"{rng.choice((100, 200, 250, 500))}m"
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{j:05d}", "namespace": "default", "labels": {"app": f"app-{j % 50}"}},
                "spec": {
                    "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
                },
            }
        )
    return {"apiVersion": "v1", "kind": "List", "items": items}


def time_simulate(path: Path) -> dict[str, float]:
    sys.path.insert(0, str(SRC))
    import kubesched

    wall, cpu = time.perf_counter(), time.process_time()
    sim = kubesched.simulate(path, seed=1, record=False)
    return {
        "wall_s": round(time.perf_counter() - wall, 2),
        "cpu_s": round(time.process_time() - cpu, 2),
        "pending": len(sim.pending),
        "scheduled": len(sim.scheduled),
    }


def cpu_s(pid: int) -> float:
    """A running process's CPU seconds so far (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def time_ui(path: Path, screenshots: Path | None = None) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {}
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched", "ui", str(path), "--port", "0", "--no-open"],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert proc.stderr is not None
        watchdog = threading.Timer(TIMEOUT_MS / 1000, proc.kill)
        watchdog.start()
        line = proc.stderr.readline()
        watchdog.cancel()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if not found:
            raise SystemExit(f"kubesched ui did not start: {line!r}")
        out["server_ready_s"] = round(time.perf_counter() - t0, 2)
        out["server_cpu_at_ready_s"] = cpu_s(proc.pid)
        t1 = time.perf_counter()
        page.goto(found[0])
        page.wait_for_selector("body[data-ready='1']")
        out["page_rendered_s"] = round(time.perf_counter() - t1, 2)
        out["load_total_s"] = round(time.perf_counter() - t0, 2)
        out["server_cpu_at_page_s"] = cpu_s(proc.pid)
        if screenshots:
            page.screenshot(path=str(screenshots / "cluster.png"), full_page=True)
        out["summary"] = page.inner_text("#summary")

        t = time.perf_counter()
        page.click("#tabs a[data-tab=pods]")
        page.wait_for_selector("#pods tbody tr")
        out["pending_list_s"] = round(time.perf_counter() - t, 2)
        rows = page.locator("#pods tbody tr")
        for label, index in (("first_record_s", 0), ("second_record_s", 1)):
            t = time.perf_counter()
            before_cpu = cpu_s(proc.pid)
            rows.nth(index).click()
            page.wait_for_selector("#filter-table")
            out[label] = round(time.perf_counter() - t, 2)
            out[label.replace("_s", "_server_cpu_s")] = round(cpu_s(proc.pid) - before_cpu, 2)
            if screenshots:
                page.screenshot(path=str(screenshots / f"{label[:-2]}.png"))
            page.click("#detail-close")
        page.click("#tabs a[data-tab=cluster]")
        page.click("#nodes tbody tr >> nth=0")
        t = time.perf_counter()
        before_cpu = cpu_s(proc.pid)
        page.click("#clone-node")
        page.wait_for_selector("#busy", state="visible")
        page.wait_for_selector("#busy", state="hidden")
        out["add_node_and_resimulate_s"] = round(time.perf_counter() - t, 2)
        out["add_node_server_cpu_s"] = round(cpu_s(proc.pid) - before_cpu, 2)
        out["server_peak_rss_mb"] = peak_rss_mb(proc.pid)
        proc.terminate()
        proc.wait(timeout=60)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out["server_cpu_s_all_steps"] = round(
            (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2
        )
        errors = proc.stderr.read()
        if "Traceback" in errors:
            raise SystemExit(errors)
        browser.close()
    return out


def plain_run_cpu(path: Path) -> dict[str, float]:
    """`kubesched simulate FILE --output table` in a child: its wall and CPU seconds (user + system)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    cmd = [sys.executable, "-m", "kubesched", "simulate", str(path), "--seed", "1", "--output", "table"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: some pods stay pending
        raise SystemExit(f"{' '.join(cmd)} failed: {status}")
    return {"wall_s": round(time.perf_counter() - t0, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2)}


def first_page_cpu(path: Path) -> dict[str, float]:
    """`kubesched ui FILE` from its start until chromium has drawn the Cluster tab and every request of the
    first page is answered: the server's CPU seconds and the wall seconds."""
    from playwright.sync_api import sync_playwright

    env = {**os.environ, "PYTHONPATH": str(SRC)}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched", "ui", str(path), "--port", "0", "--no-open"],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert proc.stderr is not None
        try:
            found = re.search(r"http://127\.0\.0\.1:\d+/", proc.stderr.readline())
            if not found:
                raise SystemExit("kubesched ui did not start")
            ready_cpu = cpu_s(proc.pid)
            page.goto(found[0])
            page.wait_for_selector("body[data-ready='1']")
            page.wait_for_load_state("networkidle")
            out = {
                "wall_s": round(time.perf_counter() - t0, 2),
                "cpu_at_ready_s": ready_cpu,
                "cpu_s": cpu_s(proc.pid),
                "peak_rss_mb": peak_rss_mb(proc.pid),
            }
        finally:
            proc.terminate()
            proc.wait(timeout=60)
            browser.close()
    return out


def first_page(args: argparse.Namespace) -> None:
    """The plain run and the UI's first page on the same realistic cluster, `runs` times each, alternating."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import realistic

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.yaml"
        with path.open("w") as f:
            realistic.write_manifests(realistic.cluster(args.nodes, args.pods), f)
        for _ in range(args.runs):
            plain, ui = plain_run_cpu(path), first_page_cpu(path)
            row = {"nodes": args.nodes, "pods": args.pods, "load_average": os.getloadavg()[0], "plain": plain, "ui": ui}
            row["first_page_ratio"] = round(ui["cpu_s"] / plain["cpu_s"], 2)
            print(json.dumps(row), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=None, help="default: 5000, or 2000 with --first-page")
    ap.add_argument("--pods", type=int, default=None, help="default: 50000, or 20000 with --first-page")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--screenshots", type=Path, default=None, help="a directory for PNGs of the pages timed")
    ap.add_argument("--first-page", action="store_true", help="the UI's first page against the plain run's CPU")
    args = ap.parse_args()
    if args.first_page:
        args.nodes, args.pods = args.nodes or 2000, args.pods or 20000
        first_page(args)
        return
    args.nodes, args.pods = args.nodes or 5000, args.pods or 50000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.yaml"
        path.write_text(yaml.safe_dump(cluster(args.nodes, args.pods), sort_keys=False))
        print(json.dumps({"nodes": args.nodes, "pods": args.pods, "simulate": time_simulate(path)}), flush=True)
        for _ in range(args.runs):
            print(json.dumps(time_ui(path, args.screenshots)), flush=True)


if __name__ == "__main__":
    main()
