// kubesched ui: the page. Plain JavaScript, no framework, nothing fetched but this server's JSON.
// Lists come a page at a time and a pod's per-plugin record only when the pod is opened, so the
// page stays quick at thousands of nodes and tens of thousands of pods.
"use strict";

const PAGE = 100;
const RECORD_PAGE = 50;
const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------ helpers

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

async function api(path, options) {
  const opts = Object.assign({ headers: {} }, options || {});
  if (opts.json !== undefined) {
    opts.body = JSON.stringify(opts.json);
    opts.headers["Content-Type"] = "application/json";
    delete opts.json;
  }
  let response;
  try {
    response = await fetch(path, opts);
  } catch (err) {
    throw new Error("the kubesched ui server does not answer (stopped?): " + err.message);
  }
  let doc = null;
  try {
    doc = await response.json();
  } catch (err) {
    throw new Error(`${response.status} ${response.statusText}`);
  }
  if (!response.ok) {
    const error = new Error(doc && doc.error ? doc.error : `${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  return doc;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== "" && v !== null && v !== undefined) q.set(k, v);
  return q.toString();
}

function pct(x) {
  return x === null || x === undefined ? "–" : `${Math.round(x * 100)}%`;
}

function bar(x) {
  const width = x === null || x === undefined ? 0 : Math.min(1, x) * 100;
  const cls = x > 1 ? "bar full" : x >= 0.8 ? "bar high" : "bar";
  const fill = el("i");
  fill.style.width = `${width}%`;
  return el("span", { class: cls, title: pct(x) }, fill);
}

function badge(result) {
  return el("span", { class: `badge ${result}` }, result);
}

function seconds(t) {
  if (t === null || t === undefined) return "–";
  if (t < 60) return `${+t.toFixed(3)}s`;
  const m = Math.floor(t / 60);
  const s = +(t - m * 60).toFixed(3);
  return m < 60 ? `${m}m${s ? s + "s" : ""}` : `${Math.floor(m / 60)}h${m % 60}m`;
}

function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

function showError(message) {
  $("error-text").textContent = message;
  $("error").hidden = false;
}

function clearError() {
  $("error").hidden = true;
  $("error-text").textContent = "";
}

// Runs a read and reports its failure in the page (never an uncaught error in the console only).
async function guarded(fn) {
  try {
    return await fn();
  } catch (err) {
    showError(err.message);
    return null;
  }
}

function pager(container, page, onChange) {
  container.replaceChildren();
  if (page.total === 0) {
    container.append("nothing to show");
    return;
  }
  const last = Math.min(page.offset + page.items.length, page.total);
  container.append(
    el("button", { type: "button", disabled: page.offset === 0, onclick: () => onChange(Math.max(0, page.offset - page.limit)) }, "‹ previous"),
    `${(page.offset + 1).toLocaleString()}–${last.toLocaleString()} of ${page.total.toLocaleString()}`,
    el("button", { type: "button", disabled: last >= page.total, onclick: () => onChange(page.offset + page.limit) }, "next ›"),
  );
}

// ------------------------------------------------------------------ state and tabs

const ui = {
  tab: "cluster",
  state: null,
  offsets: { nodes: 0, pods: 0, groups: 0, events: 0, objects: 0 },
  heat: null,
  detail: null, // {kind: "pod"|"node", key, offset, show, q}
  editing: null, // object id in the editor
};

function setTab(name) {
  if (!document.getElementById(`tab-${name}`)) name = "cluster";
  ui.tab = name;
  closeDetail();
  for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("active", a.dataset.tab === name);
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== `tab-${name}`;
  return loadTab();
}

function loadTab() {
  const loaders = { cluster: loadCluster, pods: loadPods, groups: loadGroups, timeline: loadTimeline, objects: loadObjects, config: loadConfig };
  return guarded(loaders[ui.tab]);
}

async function loadState() {
  const s = await api("/api/state");
  renderState(s);
  return s;
}

function renderState(s) {
  ui.state = s;
  const c = s.counts;
  $("summary").replaceChildren(
    el("b", {}, (c.nodes || 0).toLocaleString()), " nodes · ",
    el("b", { id: "count-scheduled" }, (c.scheduled || 0).toLocaleString()), " scheduled · ",
    el("b", { id: "count-pending" }, (c.pending || 0).toLocaleString()), " pending · ",
    el("b", {}, (c.running || 0).toLocaleString()), " running · ",
    `simulated in ${s.seconds.wall.toFixed(2)}s`,
    s.endTime > 0 ? ` · ends at ${seconds(s.endTime)}` : "",
    s.record === "on demand" ? " · plugin records on demand" : "",
  );
  $("groups-link").hidden = !s.podGroups;
  measureHeader();
  if (document.activeElement !== $("seed")) $("seed").value = s.seed;
  const w = $("warnings");
  w.hidden = s.warnings.length === 0;
  w.querySelector("summary").textContent = `${s.warnings.length} warning(s)`;
  w.querySelector("ul").replaceChildren(...s.warnings.map((t) => el("li", {}, t)));
  const zoneSelect = $("node-zone");
  const chosen = zoneSelect.value;
  zoneSelect.replaceChildren(el("option", { value: "" }, "all"), ...s.zones.map((z) => el("option", { value: z.zone }, z.zone)));
  zoneSelect.value = s.zones.some((z) => z.zone === chosen) ? chosen : "";
}

// A change: run it, then show the new state everywhere (or the simulator's refusal, changing nothing).
async function change(fn) {
  const buttons = [...document.querySelectorAll("button")];
  buttons.forEach((b) => (b.disabled = true));
  $("busy").hidden = false;
  try {
    const result = await fn();
    clearError();
    if (result && result.state) renderState(result.state);
    else await loadState();
    await loadTab();
    if (ui.detail) await refreshDetail();
    return result;
  } catch (err) {
    showError(err.message);
    return null;
  } finally {
    $("busy").hidden = true;
    buttons.forEach((b) => (b.disabled = false));
  }
}

// ------------------------------------------------------------------ cluster

async function loadCluster() {
  const [heat, nodes] = await Promise.all([api("/api/heatmap"), fetchNodes()]);
  ui.heat = heat;
  renderZones();
  renderHeatmap();
  renderNodes(nodes);
}

function renderZones() {
  const current = $("node-zone").value;
  $("zones").replaceChildren(
    ...ui.state.zones.map((z) =>
      el(
        "div",
        {
          class: z.zone === current ? "card active" : "card",
          onclick: () => {
            $("node-zone").value = z.zone === current ? "" : z.zone;
            ui.offsets.nodes = 0;
            guarded(loadCluster);
          },
        },
        el("h3", {}, z.zone),
        el("div", {}, `${z.nodes.toLocaleString()} nodes, ${z.pods.toLocaleString()} pods`),
        el("div", {}, "CPU ", bar(z.cpu), " ", pct(z.cpu)),
        el("div", {}, "memory ", bar(z.memory), " ", pct(z.memory)),
      ),
    ),
  );
}

function heatColour(x) {
  if (x === null || x === undefined) return "#e3e6eb";
  if (x > 1) return "#c43d3d";
  return `hsl(210, ${60 + 10 * x}%, ${92 - 64 * x}%)`;
}

function renderHeatmap() {
  const by = $("heat-by").value;
  const total = ui.heat.zones.reduce((n, z) => n + z.names.length, 0);
  const cell = total <= 200 ? 22 : 11;
  const box = $("heatmap");
  box.replaceChildren();
  for (const z of ui.heat.zones) {
    const width = Math.max(200, Math.min(box.clientWidth - 24 || 900, 1400));
    const perRow = Math.max(1, Math.floor(width / cell));
    const rows = Math.ceil(z.names.length / perRow);
    const canvas = el("canvas", { width: perRow * cell, height: rows * cell, "aria-label": `nodes of ${z.zone}` });
    const ctx = canvas.getContext("2d");
    z[by].forEach((x, i) => {
      ctx.fillStyle = heatColour(x);
      ctx.fillRect((i % perRow) * cell, Math.floor(i / perRow) * cell, cell - 2, cell - 2);
    });
    const at = (ev) => {
      const r = canvas.getBoundingClientRect();
      const i = Math.floor((ev.clientY - r.top) / cell) * perRow + Math.floor((ev.clientX - r.left) / cell);
      return i >= 0 && i < z.names.length ? i : -1;
    };
    canvas.addEventListener("mousemove", (ev) => {
      const i = at(ev);
      const tip = $("tooltip");
      tip.hidden = i < 0;
      if (i >= 0) {
        tip.textContent = `${z.names[i]}: CPU ${pct(z.cpu[i])}, memory ${pct(z.memory[i])}`;
        tip.style.left = `${ev.clientX + 12}px`;
        tip.style.top = `${ev.clientY + 12}px`;
      }
    });
    canvas.addEventListener("mouseleave", () => ($("tooltip").hidden = true));
    canvas.addEventListener("click", (ev) => {
      const i = at(ev);
      if (i >= 0) openNode(z.names[i]);
    });
    box.append(el("div", { class: "zone" }, el("h3", {}, `${z.zone} · ${z.names.length.toLocaleString()} nodes`), canvas));
  }
}

function fetchNodes() {
  const q = query({ zone: $("node-zone").value, q: $("node-q").value, sort: $("node-sort").value, offset: ui.offsets.nodes, limit: PAGE });
  return api(`/api/nodes?${q}`);
}

function renderNodes(page) {
  $("nodes").tBodies[0].replaceChildren(
    ...page.items.map((n) =>
      el(
        "tr",
        { onclick: () => openNode(n.name), dataset: { node: n.name } },
        el("td", {}, n.name),
        el("td", {}, n.zone),
        el("td", { class: "num" }, n.pods),
        el("td", {}, bar(n.cpu), ` ${n.usage.cpu}`),
        el("td", {}, bar(n.memory), ` ${n.usage.memory}`),
        el("td", { class: "why" }, Object.entries(n.allocatableShown).map(([k, v]) => `${k}=${v}`).join(", ")),
      ),
    ),
  );
  pager($("nodes-pager"), page, (offset) => {
    ui.offsets.nodes = offset;
    guarded(async () => renderNodes(await fetchNodes()));
  });
}

// ------------------------------------------------------------------ pods

async function loadPods() {
  const q = query({ status: $("pod-status").value, q: $("pod-q").value, offset: ui.offsets.pods, limit: PAGE });
  const page = await api(`/api/pods?${q}`);
  $("pods").tBodies[0].replaceChildren(
    ...page.items.map((p) =>
      el(
        "tr",
        { onclick: () => openPod(p.key), dataset: { pod: p.key } },
        el("td", {}, p.key),
        el("td", {}, badge(p.result)),
        el("td", {}, p.node || "–"),
        el("td", { class: "num" }, p.attempts),
        el("td", {}, p.owner || ""),
        el("td", { class: "why", title: p.message }, p.message),
      ),
    ),
  );
  pager($("pods-pager"), page, (offset) => {
    ui.offsets.pods = offset;
    guarded(loadPods);
  });
}

// ------------------------------------------------------------------ pod groups

const GROUP_NODES = 20; // nodes named for a group's placed members; the rest are counted
const GROUP_STATES = { Scheduled: "scheduled whole", Waiting: "waiting", TimedOut: "timed out" };

function groupPolicy(g) {
  return g.minCount === null ? "basic" : `minCount ${g.minCount}`;
}

function groupState(g) {
  return GROUP_STATES[g.state] + (g.timedOutAt === null ? "" : ` at ${seconds(g.timedOutAt)}`);
}

// Where the placed members went: the topology domain (a constrained group), then the nodes.
function groupPlaced(g) {
  const placed = Object.entries(g.nodes);
  let nodes = placed.slice(0, GROUP_NODES).map(([n, k]) => (k > 1 ? `${n} (${k})` : n)).join(", ");
  if (placed.length > GROUP_NODES) nodes += `, … and ${placed.length - GROUP_NODES} more nodes`;
  if (!nodes) return "–";
  if (g.topologyKey === null) return nodes;
  return `${Object.keys(g.domains).map((d) => `${g.topologyKey}=${d}`).join(", ")}: ${nodes}`;
}

function showGroupPods(g) {
  $("pod-status").value = "all";
  $("pod-q").value = g.name;
  ui.offsets.pods = 0;
  location.hash = "pods";
}

async function loadGroups() {
  const q = query({ state: $("group-state").value, q: $("group-q").value, offset: ui.offsets.groups, limit: PAGE });
  const page = await api(`/api/pod-groups?${q}`);
  $("groups").tBodies[0].replaceChildren(
    ...page.items.map((g) =>
      el(
        "tr",
        { onclick: () => showGroupPods(g), dataset: { group: `${g.namespace}/${g.name}` }, title: "show its pods" },
        el("td", {}, `${g.namespace}/${g.name}`),
        el("td", {}, groupPolicy(g)),
        el("td", { class: "num" }, `${g.placed}/${g.members}`),
        el("td", {}, groupState(g)),
        el("td", { class: "why", title: g.holdingBack || "" }, g.holdingBack || "–"),
        el("td", {}, groupPlaced(g)),
      ),
    ),
  );
  pager($("groups-pager"), page, (offset) => {
    ui.offsets.groups = offset;
    guarded(loadGroups);
  });
}

// ------------------------------------------------------------------ timeline

async function loadTimeline() {
  const q = query({ type: $("event-type").value, q: $("event-q").value, offset: ui.offsets.events, limit: PAGE });
  const [page, series] = await Promise.all([api(`/api/events?${q}`), api("/api/pending-over-time")]);
  const typeSelect = $("event-type");
  const chosen = typeSelect.value;
  typeSelect.replaceChildren(el("option", { value: "" }, "all"), ...page.types.map((t) => el("option", { value: t }, t)));
  typeSelect.value = page.types.includes(chosen) ? chosen : "";
  drawChart($("pending-chart"), series.points);
  $("events").tBodies[0].replaceChildren(
    ...page.items.map((e) =>
      el(
        "tr",
        { onclick: () => openPod(e.pod) },
        el("td", { class: "num" }, seconds(e.time)),
        el("td", {}, e.pod),
        el("td", {}, badge(e.type)),
        el("td", {}, e.node || ""),
        el("td", { class: "why", title: e.message || "" }, e.preemptor ? `preempted for ${e.preemptor}` : e.message || ""),
      ),
    ),
  );
  pager($("events-pager"), page, (offset) => {
    ui.offsets.events = offset;
    guarded(loadTimeline);
  });
}

function drawChart(canvas, points) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width;
  const h = canvas.height;
  ctx.clearRect(0, 0, w, h);
  ctx.font = "12px system-ui, sans-serif";
  ctx.fillStyle = "#5c6577";
  if (points.length === 0) {
    ctx.fillText("no events", 10, 20);
    return;
  }
  const tMax = Math.max(points[points.length - 1][0], 1e-9);
  const yMax = Math.max(1, ...points.map((p) => p[1]));
  const left = 40;
  const bottom = h - 20;
  const x = (t) => left + (t / tMax) * (w - left - 10);
  const y = (v) => bottom - (v / yMax) * (bottom - 10);
  ctx.strokeStyle = "#d8dce4";
  ctx.beginPath();
  ctx.moveTo(left, 10);
  ctx.lineTo(left, bottom);
  ctx.lineTo(w - 10, bottom);
  ctx.stroke();
  ctx.fillText(String(yMax), 4, 16);
  ctx.fillText("0", 24, bottom);
  ctx.fillText(seconds(tMax), w - 60, h - 4);
  ctx.strokeStyle = "#2f6fdb";
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(x(0), y(0));
  let last = 0;
  for (const [t, v] of points) {
    ctx.lineTo(x(t), y(last));
    ctx.lineTo(x(t), y(v));
    last = v;
  }
  ctx.lineTo(x(tMax), y(last));
  ctx.stroke();
}

// ------------------------------------------------------------------ objects and configuration

async function loadObjects() {
  const q = query({ kind: $("object-kind").value, q: $("object-q").value, offset: ui.offsets.objects, limit: PAGE });
  const page = await api(`/api/objects?${q}`);
  const kindSelect = $("object-kind");
  const chosen = kindSelect.value;
  const kinds = Object.keys(page.kinds).sort();
  kindSelect.replaceChildren(el("option", { value: "" }, "all"), ...kinds.map((k) => el("option", { value: k }, `${k} (${page.kinds[k]})`)));
  kindSelect.value = kinds.includes(chosen) ? chosen : "";
  $("objects").tBodies[0].replaceChildren(
    ...page.items.map((o) =>
      el(
        "tr",
        { onclick: () => guarded(() => editObject(o.id)) },
        el("td", {}, o.kind),
        el("td", {}, o.namespace ? `${o.namespace}/${o.name}` : o.name),
        el("td", { class: "why", title: o.origin }, o.origin),
      ),
    ),
  );
  pager($("objects-pager"), page, (offset) => {
    ui.offsets.objects = offset;
    guarded(loadObjects);
  });
}

async function editObject(id) {
  const o = await api(`/api/object?id=${id}`);
  ui.editing = o.id;
  $("editing").textContent = `${o.kind} ${o.namespace ? o.namespace + "/" : ""}${o.name} (${o.origin})`;
  $("object-text").value = o.text;
  $("object-delete").hidden = false;
  closeDetail();
  if (location.hash !== "#objects") location.hash = "#objects";
  else if (ui.tab !== "objects") await setTab("objects");
}

const TEMPLATES = {
  Node: `apiVersion: v1
kind: Node
metadata:
  name: new-node
  labels: {topology.kubernetes.io/zone: zone-a}
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
`,
  Pod: `apiVersion: v1
kind: Pod
metadata: {name: new-pod, namespace: default}
spec:
  containers:
  - name: app
    image: nginx
    resources: {requests: {cpu: 500m, memory: 512Mi}}
`,
  Deployment: `apiVersion: apps/v1
kind: Deployment
metadata: {name: new-app, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: new-app}}
  template:
    metadata: {labels: {app: new-app}}
    spec:
      containers:
      - name: app
        image: nginx
        resources: {requests: {cpu: 250m, memory: 256Mi}}
`,
};

function newObject(kind) {
  ui.editing = null;
  $("editing").textContent = "new objects";
  $("object-text").value = TEMPLATES[kind];
  $("object-delete").hidden = true;
}

async function loadConfig() {
  const c = await api("/api/config");
  $("config-text").value = c.text;
  $("config-origin").textContent = c.origin ? `Now: ${c.origin}.` : "Now: the default.";
}

// ------------------------------------------------------------------ the detail panel

function openPod(key) {
  ui.detail = { kind: "pod", key, offset: 0, show: "all", q: "" };
  return guarded(refreshDetail);
}

function openNode(name) {
  ui.detail = { kind: "node", key: name };
  return guarded(refreshDetail);
}

function closeDetail() {
  ui.detail = null;
  $("detail").hidden = true;
}

async function refreshDetail() {
  const d = ui.detail;
  try {
    const body = d.kind === "pod" ? await podDetail(d) : await nodeDetail(d.key);
    if (ui.detail !== d) return;
    $("detail-body").replaceChildren(...body);
    $("detail").hidden = false;
  } catch (err) {
    if (err.status === 404) closeDetail();
    throw err;
  }
}

function facts(pairs) {
  return el("dl", { class: "facts" }, ...pairs.filter(([, v]) => v !== null && v !== undefined && v !== "").flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

function nodeLink(name) {
  return el("span", { class: "link", onclick: () => openNode(name) }, name);
}

async function podDetail(d) {
  const [pod, record] = await Promise.all([
    api(`/api/pod?${query({ key: d.key })}`),
    api(`/api/pod/record?${query({ key: d.key, show: d.show, q: d.q, offset: d.offset, limit: RECORD_PAGE })}`),
  ]);
  const out = [
    el("h2", {}, pod.key, " ", badge(pod.result)),
    facts([
      ["node", pod.node ? nodeLink(pod.node) : "–"],
      ["attempts", pod.attempts],
      ["workload", pod.owner],
      ["pod group", pod.group ? `${pod.group.namespace}/${pod.group.name}: ${pod.group.placed} of ${pod.group.members} placed (${groupPolicy(pod.group)}), ${groupState(pod.group)}` : pod.podGroup],
      ["group held back by", pod.group && pod.group.holdingBack],
      ["bound at", pod.boundAt === null ? "" : seconds(pod.boundAt)],
      ["nominated node", pod.nominatedNode],
      ["preempted", pod.victims.join(", ")],
    ]),
  ];
  if (pod.message) out.push(el("div", { class: "message", id: "pod-message" }, pod.message));
  const actions = el("div", { class: "toolbar" });
  if (pod.entry) actions.append(el("button", { type: "button", onclick: () => guarded(() => editObject(pod.entry.id)) }, "Edit manifest"));
  if (pod.entry) actions.append(el("button", { type: "button", class: "danger", onclick: () => deleteObject(pod.entry.id, pod.key) }, "Delete pod"));
  out.push(actions);
  out.push(...recordView(d, record));
  if (pod.events.length) {
    out.push(el("h3", {}, "Timeline"));
    out.push(
      el(
        "table",
        { class: "plugins" },
        el("tbody", {}, ...pod.events.map((e) => el("tr", {}, el("td", {}, seconds(e.time)), el("td", {}, badge(e.type)), el("td", {}, e.node || ""), el("td", {}, e.preemptor ? `for ${e.preemptor}` : e.message || "")))),
      ),
    );
  }
  return out;
}

function recordView(d, r) {
  const out = [el("h3", {}, "Plugins")];
  if (!r.recorded) {
    out.push(el("p", { class: "note" }, !r.pod.simulated ? "Bound in the input: the simulation did not schedule it." : "No record for this pod."));
    return out;
  }
  if (r.examined === 0) {
    out.push(el("p", { class: "note" }, "No node was looked at (the pod was gated, or its attempt stopped before Filter)."));
    return out;
  }
  const rejected = Object.entries(r.rejectedBy).map(([p, n]) => `${p} ${n}`).join(", ");
  out.push(
    el(
      "p",
      { id: "record-summary" },
      `Last attempt looked at ${r.examined.toLocaleString()} of ${r.nodesInCluster.toLocaleString()} nodes; ${r.feasible.toLocaleString()} passed every Filter plugin.`,
      rejected ? ` Rejected by: ${rejected}.` : "",
      r.feasible === 1 ? " Scoring is skipped when only one node fits." : "",
    ),
  );
  const show = el("select", { onchange: (ev) => { d.show = ev.target.value; d.offset = 0; guarded(refreshDetail); } },
    ...[["all", "all nodes looked at"], ["feasible", "feasible"], ["rejected", "rejected"]].map(([v, t]) => el("option", { value: v, selected: d.show === v }, t)));
  const search = el("input", { type: "search", placeholder: "node contains…", value: d.q });
  search.addEventListener("input", debounce(() => { d.q = search.value; d.offset = 0; guarded(refreshDetail); }, 300));
  out.push(el("div", { class: "toolbar" }, el("label", {}, "show ", show), search));

  out.push(el("h3", {}, "Filter"));
  const fhead = el("tr", {}, el("th", {}, "node"), ...r.filterPlugins.map((p) => el("th", {}, p)));
  const frows = r.items.map((row) =>
    el(
      "tr",
      { class: row.chosen ? "chosen" : null, dataset: { node: row.node } },
      el("td", { class: "node", onclick: () => openNode(row.node) }, row.node),
      ...r.filterPlugins.map((p) => {
        const v = row.filter[p];
        if (v === undefined) return el("td", { class: "skip", title: "not run: an earlier plugin rejected the node" }, "·");
        return v === "passed" ? el("td", { class: "pass" }, "✓") : el("td", { class: "fail" }, v);
      }),
    ),
  );
  out.push(el("div", { class: "scroll" }, el("table", { class: "plugins", id: "filter-table" }, el("thead", {}, fhead), el("tbody", {}, ...frows))));

  const scored = r.items.filter((row) => row.total !== null);
  if (r.scorePlugins.length && scored.length) {
    out.push(el("h3", {}, "Score"), el("p", { class: "note" }, "Each cell: Score → NormalizeScore → final (× weight). Total: the sum of the finals."));
    const shead = el("tr", {}, el("th", {}, "node"), el("th", {}, "total"), ...r.scorePlugins.map((p) => el("th", {}, r.weights[p] ? `${p} ×${r.weights[p]}` : p)));
    const srows = scored.map((row) =>
      el(
        "tr",
        { class: row.chosen ? "chosen" : null },
        el("td", { class: "node", onclick: () => openNode(row.node) }, row.node),
        el("td", { class: "num" }, row.total),
        ...r.scorePlugins.map((p) => el("td", { class: "num" }, row.score[p] === undefined ? "" : `${row.score[p]} → ${row.normalizedScore[p]} → ${row.finalScore[p]}`)),
      ),
    );
    out.push(el("div", { class: "scroll" }, el("table", { class: "plugins", id: "score-table" }, el("thead", {}, shead), el("tbody", {}, ...srows))));
  }
  const p = el("div", { class: "pager" });
  pager(p, r, (offset) => { d.offset = offset; guarded(refreshDetail); });
  out.push(p);
  return out;
}

async function nodeDetail(name) {
  const n = await api(`/api/node?${query({ name })}`);
  const count = el("input", { type: "number", min: 1, max: 10000, value: 1, id: "clone-count" });
  count.style.width = "4.5rem";
  const actions = el("div", { class: "toolbar" });
  if (n.entry) {
    actions.append(
      el("button", { type: "button", class: "primary", id: "clone-node", onclick: () => cloneNode(n.name, Number(count.value)) }, "Add node like this one"),
      el("label", {}, "× ", count),
      el("button", { type: "button", onclick: () => guarded(() => editObject(n.entry.id)) }, "Edit manifest"),
      el("button", { type: "button", class: "danger", onclick: () => deleteObject(n.entry.id, n.name) }, "Delete node"),
    );
  } else {
    actions.append(el("span", { class: "note" }, "Created by a Scenario step: edit the Scenario to change it."));
  }
  const chips = (obj) => el("div", { class: "chips" }, ...Object.entries(obj).map(([k, v]) => el("span", {}, `${k}=${v}`)));
  return [
    el("h2", {}, n.name),
    actions,
    facts([
      ["zone", n.zone],
      ["CPU", el("span", {}, bar(n.cpu), ` ${pct(n.cpu)}: ${n.usage.cpu}`)],
      ["memory", el("span", {}, bar(n.memory), ` ${pct(n.memory)}: ${n.usage.memory}`)],
      ["pods", el("span", {}, bar(n.podShare), ` ${pct(n.podShare)}: ${n.usage.pods}`)],
      ["allocatable", chips(n.allocatableShown)],
      ["labels", chips(n.labels)],
      ["taints", n.taints.map((t) => `${t.key}${t.value ? "=" + t.value : ""}:${t.effect}`).join(", ")],
      ["unschedulable", n.unschedulable ? "yes (cordoned)" : ""],
    ]),
    el("h3", {}, `Pods (${n.podCount.toLocaleString()})`),
    n.podCount > n.pods.length ? el("p", { class: "note" }, `The first ${n.pods.length}; the Pods tab lists them all.`) : "",
    el(
      "table",
      { class: "rows" },
      el("tbody", {}, ...n.pods.map((p) => el("tr", { onclick: () => openPod(p.key) }, el("td", {}, p.key), el("td", {}, badge(p.result)), el("td", {}, p.owner || "")))),
    ),
  ];
}

function cloneNode(name, count) {
  return change(async () => {
    const r = await api("/api/node/clone", { method: "POST", json: { name, count } });
    return r;
  });
}

function deleteObject(id, label) {
  if (!confirm(`Delete ${label} and re-run?`)) return null;
  return change(async () => {
    const r = await api(`/api/object?id=${id}`, { method: "DELETE" });
    if (ui.editing === id) newObject("Node");
    if (ui.detail && ui.detail.key === label) closeDetail();
    return r;
  });
}

// ------------------------------------------------------------------ wiring

// The detail panel opens below the header, so Re-run and the tabs stay in reach.
function measureHeader() {
  document.documentElement.style.setProperty("--header", `${document.querySelector("header").offsetHeight}px`);
}

function init() {
  measureHeader();
  window.addEventListener("resize", measureHeader);
  window.addEventListener("hashchange", () => setTab(location.hash.slice(1)));
  $("error-close").addEventListener("click", clearError);
  $("detail-close").addEventListener("click", closeDetail);
  document.addEventListener("keydown", (ev) => ev.key === "Escape" && closeDetail());
  $("rerun").addEventListener("click", () => {
    const seed = $("seed").value.trim();
    change(() => api("/api/rerun", { method: "POST", json: seed === "" ? {} : { seed: Number(seed) } }));
  });
  const reload = (key, loader) => debounce(() => { ui.offsets[key] = 0; guarded(loader); }, 300);
  $("node-q").addEventListener("input", reload("nodes", async () => renderNodes(await fetchNodes())));
  $("node-zone").addEventListener("change", reload("nodes", loadCluster));
  $("node-sort").addEventListener("change", reload("nodes", async () => renderNodes(await fetchNodes())));
  $("heat-by").addEventListener("change", () => ui.heat && renderHeatmap());
  $("pod-status").addEventListener("change", reload("pods", loadPods));
  $("pod-q").addEventListener("input", reload("pods", loadPods));
  $("group-state").addEventListener("change", reload("groups", loadGroups));
  $("group-q").addEventListener("input", reload("groups", loadGroups));
  $("event-type").addEventListener("change", reload("events", loadTimeline));
  $("event-q").addEventListener("input", reload("events", loadTimeline));
  $("object-kind").addEventListener("change", reload("objects", loadObjects));
  $("object-q").addEventListener("input", reload("objects", loadObjects));
  for (const b of document.querySelectorAll("[data-template]")) b.addEventListener("click", () => newObject(b.dataset.template));
  $("object-apply").addEventListener("click", () =>
    change(async () => {
      const r = await api("/api/objects", { method: "POST", json: { text: $("object-text").value } });
      $("editing").textContent = r.changed.map((c) => `${c.change} ${c.kind} ${c.namespace ? c.namespace + "/" : ""}${c.name}`).join(", ");
      return r;
    }),
  );
  $("object-delete").addEventListener("click", () => ui.editing !== null && deleteObject(ui.editing, $("editing").textContent));
  $("config-apply").addEventListener("click", () => change(() => api("/api/config", { method: "PUT", json: { text: $("config-text").value } })));
  $("config-default").addEventListener("click", () => change(() => api("/api/config", { method: "PUT", json: { text: "" } })));
  newObject("Node");
  guarded(async () => {
    await loadState();
    await setTab(location.hash.slice(1) || "cluster");
    document.body.dataset.ready = "1";
  });
}

document.addEventListener("DOMContentLoaded", init);
