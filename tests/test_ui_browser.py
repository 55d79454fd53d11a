"""kubesched ui end to end: the command serves, Debian's chromium (headless, driven by Playwright) uses the page.

Load the UI, open a pending pod, see its plugin table, add a node like the full one,
re-run, and see the pod scheduled; a refused edit shows the simulator's message in the
page; with a token, the page asks for it, then works. Skipped, saying why, where
/usr/bin/chromium or the playwright package is missing (.ci/run installs chromium).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.test_ui import write_cluster

import kubesched
from kubesched_testing.browser import CHROMIUM, CHROMIUM_ARGS

START_TIMEOUT = 60.0

if not CHROMIUM.exists():
    pytest.skip(
        f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)",
        allow_module_level=True,
    )
playwright_api = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package")
expect = playwright_api.expect


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@contextmanager
def serve(tmp_path: Path, *args: str, files: tuple[str, ...] = ()) -> Iterator[str]:
    """`kubesched ui FILES ARGS` (by default a small cluster written to `tmp_path`) on a free loopback port; its URL
    (with the token, if any), read off the line it prints."""
    src = str(Path(kubesched.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    env.pop("KUBESCHED_UI_TOKEN", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesched",
            "ui",
            *(files or [str(write_cluster(tmp_path))]),
            "--port",
            "0",
            "--no-open",
            *args,
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    watchdog = threading.Timer(START_TIMEOUT, proc.kill)
    watchdog.start()
    line = proc.stderr.readline()
    watchdog.cancel()
    found = re.search(r"(http://127\.0\.0\.1:\d+/(?:\?token=[\w-]+)?)", line)
    try:
        assert found, f"kubesched ui did not start: {line!r}"
        yield found[1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        rest = proc.stderr.read()
        proc.stderr.close()
        assert "Traceback" not in rest, rest


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with serve(tmp_path) as url:
        yield url


def open_page(browser: Any, url: str, requests: list[str], errors: list[str]) -> Any:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    return page


def test_pending_pod_plugins_then_add_a_node_and_rerun(browser: Any, server: str) -> None:
    requests: list[str] = []
    errors: list[str] = []
    p = open_page(browser, server, requests, errors)
    expect(p.locator("#count-pending")).to_have_text("1")
    expect(p.locator("#heatmap canvas")).to_have_count(1)
    expect(p.locator("#nodes tbody tr")).to_have_count(1)
    cells = p.locator("#nodes tbody tr[data-node='node-1'] td")
    expect(cells.nth(3)).to_have_text("2/2")  # as kubesched simulate's node table: one unit a cell
    expect(cells.nth(4)).to_have_text("0Gi/8Gi")

    p.click("#tabs a[data-tab=pods]")
    p.click("#pods tbody tr[data-pod='default/pod-3']")
    expect(p.locator("#pod-message")).to_contain_text("0/1 nodes are available: 1 Insufficient cpu.")
    expect(p.locator("#record-summary")).to_contain_text("Rejected by: NodeResourcesFit 1.")
    row = p.locator("#filter-table tbody tr[data-node='node-1']")
    expect(row.locator("td.fail")).to_have_text("Insufficient cpu")
    expect(p.locator("#filter-table thead th")).to_contain_text(["node", "NodeUnschedulable", "NodeResourcesFit"])
    p.click("#detail-close")

    p.click("#tabs a[data-tab=cluster]")
    p.click("#nodes tbody tr[data-node='node-1']")
    p.click("#clone-node")
    expect(p.locator("#count-pending")).to_have_text("0")
    expect(p.locator("#nodes tbody tr")).to_have_count(2)

    p.fill("#seed", "5")
    p.click("#rerun")
    expect(p.locator("#busy")).to_be_hidden()
    p.click("#tabs a[data-tab=pods]")
    p.select_option("#pod-status", "scheduled")
    scheduled = p.locator("#pods tbody tr[data-pod='default/pod-3']")
    expect(scheduled.locator("td").nth(2)).to_have_text("node-2")
    scheduled.click()
    expect(p.locator("#score-table tbody tr.chosen td").first).to_have_text("node-2")
    expect(p.locator("#error")).to_be_hidden()

    assert not errors
    assert requests and all(u.startswith(server) for u in requests), [u for u in requests if not u.startswith(server)]


def test_a_refused_edit_shows_the_simulators_message(browser: Any, server: str) -> None:
    requests: list[str] = []
    errors: list[str] = []
    p = open_page(browser, server, requests, errors)
    p.click("#tabs a[data-tab=objects]")
    bad = "kind: Pod\nmetadata: {name: bad}\nspec:\n  containers: [{name: c, resources: {requests: {cpu: x}}}]\n"
    p.fill("#object-text", bad)
    p.click("#object-apply")
    error = p.locator("#error-text")
    expect(error).to_contain_text("edited in the UI (Pod default/bad): spec.containers[0].resources.requests[cpu]")
    expect(p.locator("#count-pending")).to_have_text("1")
    assert not errors


def test_with_a_token_the_page_asks_for_it_then_works(browser: Any, tmp_path: Path) -> None:
    with serve(tmp_path, "--require-token") as url:
        base, token = url.split("?token=")
        page = browser.new_page()
        answer = page.goto(base)
        assert answer is not None and answer.status == 401
        page.fill("input[name=token]", token[:-1])
        page.click("button[type=submit]")
        expect(page.locator("body")).to_contain_text("that token is not this server's")
        page.fill("input[name=token]", token)
        page.click("button[type=submit]")
        page.wait_for_selector("body[data-ready='1']")
        assert page.url == base and page.evaluate("document.cookie") == ""  # HttpOnly: no script reads it
        page.click("#nodes tbody tr[data-node='node-1']")
        page.click("#clone-node")
        expect(page.locator("#nodes tbody tr")).to_have_count(2)
        expect(page.locator("#error")).to_be_hidden()

        requests: list[str] = []
        errors: list[str] = []
        again = open_page(browser, url, requests, errors)  # the printed URL, in a browser without the cookie
        expect(again.locator("#nodes tbody tr")).to_have_count(2)
        assert again.url == base and not errors


def test_pod_groups_tab_and_a_members_group(browser: Any, tmp_path: Path) -> None:
    gangs = str(Path(__file__).resolve().parents[1] / "examples" / "gangs")
    gates = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
    with serve(tmp_path, "--feature-gates", gates, files=(gangs,)) as url:
        requests: list[str] = []
        errors: list[str] = []
        p = open_page(browser, url, requests, errors)
        p.click("#tabs a[data-tab=groups]")
        expect(p.locator("#groups tbody tr")).to_have_count(4)
        train = p.locator("#groups tbody tr[data-group='default/train'] td")
        expect(train).to_have_text(
            ["default/train", "minCount 3", "3/3", "scheduled whole", "–", "topology.kubernetes.io/zone=b: b1, b2, b3"]
        )
        tiny = p.locator("#groups tbody tr[data-group='default/tiny'] td")
        expect(tiny.nth(4)).to_have_text("only 2 pods exist, fewer than minCount: they wait in PreEnqueue")
        p.select_option("#group-state", "Waiting")
        expect(p.locator("#groups tbody tr")).to_have_count(3)
        p.click("#groups tbody tr[data-group='default/eval']")
        expect(p.locator("#pods tbody tr")).to_have_count(4)
        p.click("#pods tbody tr[data-pod='default/eval-0']")
        expect(p.locator("#detail-body dl.facts")).to_contain_text("default/eval: 0 of 4 placed (minCount 4), waiting")
        expect(p.locator("#detail-body dl.facts")).to_contain_text("blocked by: 0/5 nodes are available")
        assert not errors
        assert all(u.startswith(url.split("?")[0]) for u in requests)
