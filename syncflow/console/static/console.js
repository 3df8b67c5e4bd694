// syncflow console: live updates by polling the JSON API (no reloads), and replay with a confirmation.
"use strict";

const POLL_MS = 2000;
const STATES = ["synced", "pending", "running", "retrying", "parked"];
const csrf = () => document.querySelector('meta[name="csrf-token"]').content;

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text !== "") node.textContent = text;
  return node;
}

async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  return response.json();
}

async function post(url, fields) {
  const response = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
    body: JSON.stringify(fields || {}),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error || `${response.status} ${response.statusText}`);
  return body;
}

function poll(refresh) {
  const tick = () => refresh().catch((error) => console.warn("refresh failed:", error)).finally(() => setTimeout(tick, POLL_MS));
  setTimeout(tick, POLL_MS);
}

function confirmThen(text, action) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  dialog.onclose = () => { if (dialog.returnValue === "ok") action(); };
  dialog.returnValue = "";
  dialog.showModal();
}

function countCells(row, counts) {
  for (const state of STATES) row.appendChild(el("td", { class: `n ${state}`, "data-state": state }, String(counts[state])));
}

function seconds(value) {
  return value === null ? "–" : `${value.toFixed(3)} s`;
}

function showResult(promise) {
  const out = document.getElementById("replay-result");
  out.textContent = "replaying…";
  promise.then((result) => { out.textContent = result.message; })
    .catch((error) => { out.textContent = `replay failed: ${error.message}`; });
}

function overviewPage() {
  document.addEventListener("click", (event) => {
    const button = event.target.closest(".replay-rule");
    if (!button) return;
    const rule = button.dataset.rule;
    confirmThen(`Replay every parked key of rule ${rule}?`, () => showResult(post("/api/replay", { rule })));
  });
  document.getElementById("replay-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const fields = Object.fromEntries(new FormData(event.target));
    const what = [fields.rule && `rule ${fields.rule}`, fields.cause && `cause ${fields.cause}`].filter(Boolean);
    if (!what.length) { document.getElementById("replay-result").textContent = "name a rule, a cause or both"; return; }
    confirmThen(`Replay every parked key of ${what.join(" and ")}?`, () => showResult(post("/api/replay", fields)));
  });
  poll(async () => {
    const o = await getJSON("/api/overview");
    const totals = document.getElementById("totals-row");
    totals.replaceChildren();
    countCells(totals, o.totals);
    document.getElementById("partial").hidden = !o.partial;
    const l = o.latency;
    document.getElementById("latency").textContent =
      l.p50 === null ? "unknown" : `p50 ${l.p50.toFixed(3)} s · p99 ${l.p99.toFixed(3)} s`;
    document.getElementById("latency-error").textContent = l.error;
    document.getElementById("leader").textContent = o.leader.holder || "unknown";
    document.getElementById("leader-error").textContent = o.leader.error;
    document.getElementById("workers").textContent = o.workers.live.join(", ") || "none answered";
    document.getElementById("workers-error").textContent = o.workers.error;
    const queues = document.getElementById("queues-body");
    queues.replaceChildren(...o.queues.map((q) => {
      const row = el("tr", { "data-testid": "queue-row" });
      row.append(el("td", {}, q.queue), el("td", { class: "n" }, String(q.depth)),
        el("td", { class: "n" }, q.oldest_pending_seconds === null ? "–" : `${q.oldest_pending_seconds.toFixed(1)} s`));
      return row;
    }));
    const rules = document.getElementById("rules-body");
    const latencies = new Map(l.rules.map((r) => [r.name, r]));
    rules.replaceChildren(...o.rules.map((g) => {
      const row = el("tr", { "data-testid": "rule-row", "data-rule": g.name });
      const name = el("td");
      name.appendChild(el("a", { href: `/objects?rule=${encodeURIComponent(g.name)}` }, g.name));
      row.appendChild(name);
      countCells(row, g);
      const rule = latencies.get(g.name);
      row.append(el("td", { class: "n", "data-testid": "rule-p50" }, seconds(rule ? rule.p50 : null)),
        el("td", { class: "n", "data-testid": "rule-p99" }, seconds(rule ? rule.p99 : null)));
      const action = el("td");
      if (g.parked) action.appendChild(el("button", { class: "replay-rule", "data-testid": "replay-rule", "data-rule": g.name }, "Replay parked"));
      row.appendChild(action);
      return row;
    }));
    const workspaces = document.getElementById("workspaces-body");
    workspaces.replaceChildren(...o.workspaces.map((g) => {
      const row = el("tr", { "data-testid": "workspace-row" });
      const name = el("td");
      name.appendChild(el("a", { href: `/objects?workspace=${encodeURIComponent(g.name)}` }, g.name));
      row.appendChild(name);
      countCells(row, g);
      return row;
    }));
  });
}

function objectsPage() {
  const body = document.getElementById("objects-body");
  if (!body) return;
  poll(async () => {
    const page = await getJSON(`/api/objects${window.location.search}`);
    const states = new Map(page.items.map((row) => [row.key, row]));
    for (const row of body.querySelectorAll('tr[data-testid="object-row"]')) {
      const fresh = states.get(row.dataset.key);
      const cell = row.querySelector('[data-testid="object-state"]');
      const state = fresh ? fresh.state : cell.textContent;
      cell.textContent = state;
      cell.className = `state ${state}`;
    }
  });
}

function fillError(error) {
  const box = document.getElementById("last-error");
  box.replaceChildren();
  if (!error) { box.appendChild(el("p", { class: "note" }, "none")); return; }
  const line = el("p");
  line.append(el("span", { id: "e-type" }, error.type));
  if (error.status !== null) {
    line.append(" · HTTP ", el("b", { class: "status", id: "e-status" }, String(error.status)), " ",
      el("span", { id: "e-reason" }, error.reason));
  }
  line.append(" · cause ", el("code", { id: "e-cause" }, error.cause || "none"));
  box.append(line, el("pre", { id: "e-message" }, error.message));
}

function objectPage() {
  const key = document.getElementById("key").dataset.key;
  const url = `/api/objects/${key.split("/").map(encodeURIComponent).join("/")}`;
  document.getElementById("replay").addEventListener("click", () => {
    confirmThen(`Replay ${key}?`, () => showResult(post(`${url}/replay`)));
  });
  poll(async () => {
    const detail = await getJSON(`${url}?sides=false`);
    const state = document.getElementById("object-state");
    state.textContent = detail.row.state;
    state.className = `state ${detail.row.state}`;
    for (const [name, value] of Object.entries(detail.history)) {
      const cell = document.getElementById(`h-${name}`);
      if (cell) cell.textContent = value === null ? "" : String(value);
    }
    fillError(detail.history.last_error);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  if (page === "overview") overviewPage();
  else if (page === "objects") objectsPage();
  else if (page === "object") objectPage();
});
