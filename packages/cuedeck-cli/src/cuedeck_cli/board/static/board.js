// CueDeck board: cards by status, the dependency graph, scenes and memory, live from disk.
// Plain DOM code, no framework and no network beyond this server.
"use strict";

const state = { view: "cards", data: null, hits: null, sceneTimer: 0, editing: null };
const $ = (selector) => document.querySelector(selector);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child.nodeType ? child : String(child));
  }
  return node;
}

function svg(tag, attrs = {}) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  return node;
}

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const reply = await response.json();
  if (!response.ok || (reply && reply.error)) {
    const details = (reply && reply.error) || {};
    const error = new Error(details.message || response.statusText);
    error.code = details.code || response.status;
    error.details = details;
    throw error;
  }
  return reply;
}

function notice(text) {
  const box = $("#notice");
  box.textContent = text;
  box.hidden = !text;
}

// -- cards -------------------------------------------------------------------------------

function fillSelect(select, values) {
  const current = select.value;
  select.replaceChildren(el("option", { value: "" }, "any"), ...values.map((v) => el("option", { value: v }, v)));
  select.value = values.includes(current) ? current : "";
}

async function loadCards() {
  state.data = await api("/api/cards");
  fillSelect($("#f-tag"), state.data.tags);
  fillSelect($("#f-priority"), state.data.priorities);
  fillSelect($("#f-assignee"), state.data.assignees);
  $('.tab[data-view="memory"]').hidden = !state.data.memory;
  if (state.data.warnings && state.data.warnings.length) notice(state.data.warnings.join(" · "));
  const background = state.data.background || [];
  $("#background").hidden = !background.length;
  $("#background").textContent = background.length ? `In the background: ${background.join(" · ")}` : "";
  renderCards();
}

function visible(card) {
  const tag = $("#f-tag").value, priority = $("#f-priority").value, assignee = $("#f-assignee").value;
  if (tag && !(card.tags || []).includes(tag)) return false;
  if (priority && card.priority !== priority) return false;
  if (assignee && card.assignee !== assignee) return false;
  if (state.hits && !state.hits.has(card.id)) return false;
  return true;
}

function renderCards() {
  const columns = state.data.columns.map((status) => {
    const cards = state.data.cards.filter((card) => card.status === status && visible(card));
    const column = el("section", { class: "column", "data-status": status, "aria-label": status },
      el("h2", {}, status, el("span", {}, String(cards.length))),
      cards.map(cardElement));
    column.addEventListener("dragover", (event) => { event.preventDefault(); column.classList.add("over"); });
    column.addEventListener("dragleave", () => column.classList.remove("over"));
    column.addEventListener("drop", (event) => {
      event.preventDefault();
      column.classList.remove("over");
      const id = event.dataTransfer.getData("text/plain");
      if (id) moveCard(id, status);
    });
    return column;
  });
  $("#columns").replaceChildren(...columns);
  refreshAtExpiry();
}

function cardElement(card) {
  const node = el("article", {
    class: `card p-${card.priority}${state.hits && state.hits.has(card.id) ? " match" : ""}`,
    draggable: "true", tabindex: "0", "data-id": card.id,
    "aria-label": `${card.title}, ${card.status}, ${card.priority} priority`,
  },
  el("div", { class: "title" }, card.title),
  card.claim ? claimElement(card.claim) : null,
  el("div", { class: "meta" },
    el("span", {}, card.id), el("span", {}, card.priority),
    card.assignee ? el("span", {}, `@${card.assignee}`) : null,
    (card.depends_on || []).length ? el("span", {}, `needs ${card.depends_on.join(", ")}`) : null,
    (card.tags || []).map((tag) => el("span", { class: "tag" }, tag)),
    (card.code_refs || []).filter((ref) => ref.state !== "fresh" && ref.state !== "new").map(
      (ref) => el("span", { class: `ref ref-${ref.state}`, title: `${ref.ref}: ${ref.label}` }, `${ref.state} ${ref.ref.split("#").pop()}`))));
  node.addEventListener("dragstart", (event) => event.dataTransfer.setData("text/plain", card.id));
  node.addEventListener("dblclick", () => openEditor(card));
  node.addEventListener("keydown", (event) => {
    const order = state.data.columns, at = order.indexOf(card.status);
    if (event.key === "Enter") openEditor(card);
    else if (event.key === "]" && at < order.length - 1) moveCard(card.id, order[at + 1]);
    else if (event.key === "[" && at > 0) moveCard(card.id, order[at - 1]);
    else return;
    event.preventDefault();
  });
  return node;
}

// An agent's claim on a card: who, since and until when (local times; ISO in the tooltip).
function claimElement(claim) {
  const clock = (iso) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  const paths = claim.paths.length ? `; files: ${claim.paths.join(", ")}` : "";
  return el("div", {
    class: "claim", "data-agent": claim.agent, "data-until": claim.until,
    title: `held by ${claim.agent} since ${claim.since} until ${claim.until}${paths}`,
  }, `held by ${claim.agent} · since ${clock(claim.since)} · until ${clock(claim.until)}`);
}

// Refresh when the first claim shown runs out: the card is free again.
function refreshAtExpiry() {
  clearTimeout(state.claimTimer);
  const ends = state.data.cards.filter((card) => card.claim).map((card) => Date.parse(card.claim.until));
  if (!ends.length) return;
  const wait = Math.max(0, Math.min(...ends) - Date.now()) + 250;
  state.claimTimer = setTimeout(refresh, Math.min(wait, 2 ** 31 - 1));
}

function cardById(id) {
  return state.data.cards.find((card) => card.id === id);
}

async function saveCard(card, updates) {
  try {
    await api(`/api/cards/${encodeURIComponent(card.id)}`, { updates, content_hash: card.content_hash });
    notice("");
    return true;
  } catch (error) {
    if (error.code === 1005) {
      notice(`${card.id} changed on disk since this page loaded it; showing the newer version. Nothing was overwritten.`);
      await loadCards();
      return false;
    }
    throw error;
  } finally {
    await loadCards();
    const again = document.querySelector(`.card[data-id="${card.id}"]`);
    if (again && !$("#editor").open) again.focus();
  }
}

async function moveCard(id, status) {
  const card = cardById(id);
  if (!card || card.status === status) return;
  try {
    await saveCard(card, { status });
  } catch (error) {
    notice(`Could not move ${id}: ${error.message}`);
  }
}

function openEditor(card) {
  const form = $("#editor-form");
  state.editing = card || null;
  $("#editor-title").textContent = card ? `Card ${card.id}` : "New card";
  form.title.value = card ? card.title : "";
  form.status.value = card ? card.status : "todo";
  form.status.disabled = !card;
  form.priority.value = card ? card.priority : "medium";
  form.assignee.value = card && card.assignee ? card.assignee : "";
  form.tags.value = card ? (card.tags || []).join(", ") : "";
  form.depends_on.value = card ? (card.depends_on || []).join(", ") : "";
  form.notes.value = "";
  $("#editor-error").hidden = true;
  $("#editor").showModal();
  form.title.focus();
}

const list = (text) => text.split(",").map((part) => part.trim()).filter(Boolean);

async function submitEditor(event) {
  if (event.submitter && event.submitter.value !== "save") return;
  event.preventDefault();
  const form = $("#editor-form"), card = state.editing;
  const fields = {
    title: form.title.value.trim(), priority: form.priority.value,
    tags: list(form.tags.value), depends_on: list(form.depends_on.value),
  };
  if (form.assignee.value.trim()) fields.assignee = form.assignee.value.trim();
  try {
    if (card) {
      const updates = changes(card, { ...fields, status: form.status.value, assignee: form.assignee.value.trim() });
      if (form.notes.value.trim()) updates.notes = form.notes.value.trim();
      if (Object.keys(updates).length) await saveCard(card, updates);
      $("#editor").close();
    } else {
      if (form.notes.value.trim()) fields.body = form.notes.value.trim();
      await api("/api/cards", fields);
      $("#editor").close();
      await loadCards();
    }
  } catch (error) {
    const cycle = error.details.cycle_path;
    $("#editor-error").textContent = cycle ? `Refused: that would make a cycle ${cycle.join(" → ")}` : error.message;
    $("#editor-error").hidden = false;
  }
}

// update_task's fields: plain values that changed, and lists as what to add and remove.
function changes(card, wanted) {
  const updates = {};
  for (const key of ["title", "status", "priority"]) if (wanted[key] !== card[key]) updates[key] = wanted[key];
  if (wanted.assignee !== (card.assignee || "")) updates.assignee = wanted.assignee;
  for (const [key, add, remove] of [["tags", "add_tags", "remove_tags"], ["depends_on", "add_depends_on", "remove_depends_on"]]) {
    const before = card[key] || [], after = wanted[key] || [];
    const added = after.filter((item) => !before.includes(item));
    const removed = before.filter((item) => !after.includes(item));
    if (added.length) updates[add] = added;
    if (removed.length) updates[remove] = removed;
  }
  return updates;
}

async function search() {
  const query = $("#q").value.trim();
  const hits = $("#hits");
  if (!query || !state.data.search) {
    state.hits = null;
    hits.hidden = true;
    renderCards();
    return;
  }
  const reply = await api(`/api/search?q=${encodeURIComponent(query)}`);
  const found = reply.result || reply;
  const list = found.results || [];
  if (found.note) notice(found.note);
  // The cards that match, searched among cards alone: in a code repository the first
  // hits are code, and filtering the columns by them would empty every one.
  state.hits = new Set(reply.cards || []);
  hits.replaceChildren(...list.map((hit) => el("li", {}, `${hit.path} `, el("span", { class: "muted" }, hit.title || ""))));
  hits.hidden = list.length === 0;
  renderCards();
}

// -- graph -------------------------------------------------------------------------------

async function loadGraph() {
  const graph = await api("/api/graph");
  const inCycle = new Set(graph.cycles.flat());
  const deps = new Map(graph.nodes.map((node) => [node.id, []]));
  for (const edge of graph.edges) deps.get(edge.from).push(edge.to);
  const layer = new Map();
  const depth = (id, seen = new Set()) => {
    if (layer.has(id)) return layer.get(id);
    if (seen.has(id)) return 0;  // a cycle: drawn, not followed
    seen.add(id);
    const value = Math.max(-1, ...deps.get(id).map((dep) => depth(dep, seen))) + 1;
    layer.set(id, value);
    return value;
  };
  graph.nodes.forEach((node) => depth(node.id));
  const rows = new Map();
  for (const node of graph.nodes) {
    const at = layer.get(node.id);
    if (!rows.has(at)) rows.set(at, []);
    rows.get(at).push(node);
  }
  const W = 200, H = 46, GX = 60, GY = 26, place = new Map();
  for (const [at, nodes] of rows) nodes.forEach((node, i) => place.set(node.id, { x: 20 + at * (W + GX), y: 20 + i * (H + GY) }));
  const width = 40 + rows.size * (W + GX), height = 40 + Math.max(1, ...[...rows.values()].map((r) => r.length)) * (H + GY);
  const root = svg("svg", { width, height, role: "img", "aria-label": "Card dependency graph" });
  const defs = svg("defs"), marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#8c959f" }));
  defs.append(marker);
  root.append(defs);
  for (const edge of graph.edges) {
    const a = place.get(edge.from), b = place.get(edge.to);
    const cyc = inCycle.has(edge.from) && inCycle.has(edge.to);
    root.append(svg("path", { class: `edge${cyc ? " cycle" : ""}`, d: `M ${a.x} ${a.y + H / 2} C ${a.x - GX / 2} ${a.y + H / 2}, ${b.x + W + GX / 2} ${b.y + H / 2}, ${b.x + W} ${b.y + H / 2}` }));
  }
  for (const node of graph.nodes) {
    const { x, y } = place.get(node.id);
    const group = svg("g", { class: `node ${node.status}${node.ready ? " ready" : ""}${inCycle.has(node.id) ? " cycle" : ""}`, transform: `translate(${x},${y})` });
    const title = svg("title");
    title.textContent = `${node.id}: ${node.title} (${node.status}${node.ready ? ", ready" : ""})`;
    const name = svg("text", { x: 10, y: 19, "font-weight": "600" });
    name.textContent = node.title.length > 26 ? `${node.title.slice(0, 25)}…` : node.title;
    const meta = svg("text", { x: 10, y: 36, fill: "#57606a", "font-size": "12" });
    meta.textContent = `${node.id} · ${node.status}${node.ready ? " · ready" : ""}`;
    group.append(title, svg("rect", { width: W, height: H }), name, meta);
    root.append(group);
  }
  $("#graph").replaceChildren(root);
  if (graph.cycles.length) notice(`Dependency cycle: ${graph.cycles.map((c) => c.join(" → ")).join("; ")}`);
}

// -- scene -------------------------------------------------------------------------------

// A drift label in a manifest note ("drifted: +3 -1 lines since ...", "#Sym moved: ..."),
// as the cards show them; the rest of the note as text.
const DRIFT = /^(?:#\S+ )?(moved|drifted|orphaned):/;

// The manifest's "why": the item's role, its notes (drift labels as labels) and why it
// was placed as it was.
function why(item) {
  const notes = (item.note || "").split("; ").filter(Boolean).map((part) => {
    const drift = DRIFT.exec(part);
    return drift ? el("span", { class: `ref ref-${drift[1]}` }, part) : el("span", {}, part);
  });
  // A note that starts with the role ("related: text .50") says it already.
  const role = (item.note || "").startsWith(item.role) ? null : el("span", {}, item.role);
  return [role, ...notes, item.reason ? el("span", {}, item.reason) : null];
}

async function loadScene() {
  if (!state.data) await loadCards();
  const select = $("#scene-card");
  if (!select.options.length) {
    const active = state.data.cards.filter((c) => c.status === "active").concat(state.data.cards.filter((c) => c.status !== "active"));
    select.replaceChildren(...active.map((card) => el("option", { value: card.id }, `${card.id} · ${card.title}`)));
  }
  const slider = $("#budget");
  if (!state.budgetSet && state.data.budget) {
    // The slider starts at the workspace's [scene] token_limit, with room on both sides.
    const configured = state.data.budget;
    slider.max = String(Math.max(8000, configured * 2));
    slider.step = configured % 100 === 0 ? "100" : "1";
    slider.value = String(configured);
    state.budgetSet = true;
  }
  const budget = slider.value;
  $("#budget-value").textContent = budget;
  try {
    const scene = await api(`/api/scene?card=${encodeURIComponent(select.value)}&budget=${budget}`);
    const manifest = scene.manifest;
    $("#scene-total").textContent = `${manifest.tokens} of ${manifest.token_limit} tokens (${manifest.counter})`;
    $("#manifest tbody").replaceChildren(...manifest.candidates.map((item) => el("tr", {},
      el("td", {}, String(item.priority)),
      el("td", {}, item.full_tokens !== item.tokens ? `${item.tokens}/${item.full_tokens}` : String(item.tokens)),
      el("td", { class: `placed-${item.placed}` }, item.placed),
      el("td", { class: "path" }, item.anchor ? `${item.path}#${item.anchor}` : item.path),
      el("td", { class: "why" }, why(item)))),
      // Dead references (an orphaned code reference names its likeliest new home).
      ...(manifest.missing || []).map((dead) => el("tr", { class: "missing" },
        el("td", {}, "–"), el("td", {}, "–"), el("td", { class: "placed-dropped" }, "missing"),
        el("td", { class: "path" }, dead.line ? `${dead.path}:${dead.line}` : dead.path),
        el("td", { class: "why" }, el("span", { class: /\borphaned:/.test(dead.message) ? "ref ref-orphaned" : "" }, dead.message)))));
    $("#scene-text").textContent = scene.text;
    notice("");
  } catch (error) {
    $("#manifest tbody").replaceChildren();
    $("#scene-text").textContent = "";
    notice(`No scene: ${error.message}`);
  }
}

// -- memory ------------------------------------------------------------------------------

// ?project=ID shows another project's memory; without it the server's default applies.
const memoryProject = () => new URLSearchParams(location.search).get("project") || "";

// A value in [0, 1] as a labelled bar (the health factors are bounded so).
function bar(label, value, hint) {
  const share = Math.min(1, Math.max(0, Number(value) || 0));
  const level = share >= 0.66 ? "good" : share >= 0.33 ? "fair" : "poor";
  const fill = el("div", { class: `fill ${level}` });
  fill.style.width = `${(share * 100).toFixed(1)}%`;  // CSSOM: the page's CSP refuses style attributes
  return el("div", { class: "factor", "data-factor": label },
    el("span", { class: "factor-name" }, label),
    el("div", {
      class: "bar", role: "meter", "aria-label": label, "aria-valuemin": "0", "aria-valuemax": "1",
      "aria-valuenow": share.toFixed(2), title: hint || "",
    }, fill),
    el("span", { class: "factor-value" }, share.toFixed(2)));
}

function age(iso) {
  const hours = Math.max(0, (Date.now() - Date.parse(iso)) / 3.6e6);
  if (!Number.isFinite(hours)) return "";
  if (hours < 1) return `${Math.round(hours * 60)} min`;
  if (hours < 48) return `${hours.toFixed(1)} h`;
  return `${(hours / 24).toFixed(1)} d`;
}

const firstLine = (text) => (text || "").split("\n").find((line) => line.trim()) || "";

async function pinSegment(project, segment, pinned) {
  try {
    const reply = await api("/api/memory/pin", { project_id: project, segment_id: segment.segment_id, pinned });
    const errors = reply.errors || [];
    notice(errors.length ? `Could not ${pinned ? "pin" : "unpin"} ${segment.segment_id}: ${errors.map((e) => e.reason || e.message || JSON.stringify(e)).join("; ")}` : "");
  } catch (error) {
    notice(`Could not ${pinned ? "pin" : "unpin"} ${segment.segment_id}: ${error.message}`);
  }
  await loadMemory();
}

function segmentRow(project, segment) {
  const line = firstLine(segment.text);
  return el("tr", { "data-segment": segment.segment_id, class: segment.pinned ? "pinned" : "" },
    el("td", {}, el("span", { class: `type t-${segment.type}` }, segment.type)),
    el("td", { class: "num" }, segment.tokens.toLocaleString("en")),
    el("td", {}, el("button", {
      type: "button", class: "pin", "aria-pressed": String(segment.pinned),
      "aria-label": `${segment.pinned ? "Unpin" : "Pin"} ${segment.segment_id}`,
      onclick: () => pinSegment(project, segment, !segment.pinned),
    }, segment.pinned ? "pinned" : "pin")),
    el("td", { class: "num", title: segment.last_touched_at }, age(segment.last_touched_at || segment.created_at)),
    el("td", { class: "first-line", title: segment.segment_id }, line.length > 140 ? `${line.slice(0, 139)}…` : line));
}

async function loadMemory() {
  const asked = memoryProject();
  const memory = await api(asked ? `/api/memory?project=${encodeURIComponent(asked)}` : "/api/memory");
  const project = memory.project_id;
  const usage = memory.usage || {}, metrics = usage.usage_metrics || {}, health = usage.health_score || {};
  const working = memory.working_set || {}, segments = working.segments || [];
  const factors = health.factors || {}, weights = health.weights || {};
  const advice = [
    ...(usage.warnings || []).map((w) => el("li", { class: `warning level-${w.level}` }, el("b", {}, w.level), " ", w.message)),
    ...(usage.recommendations || []).filter((r) => !(usage.warnings || []).some((w) => w.message === r.message))
      .map((r) => el("li", { class: `recommendation level-${r.priority}` }, el("b", {}, r.priority), " ", r.message)),
  ];
  const shown = segments.length, total = working.segment_count ?? shown;
  $("#memory").replaceChildren(
    el("div", { class: "memory-head" },
      el("div", { class: "health", "aria-label": "Health score" },
        el("b", { id: "health-score" }, health.score === undefined ? "–" : String(health.score)), "health of 100"),
      el("div", { class: "memory-facts" },
        el("div", {}, `project ${project} · task ${usage.task_id || "none"}`),
        el("div", { id: "memory-usage" }, `${(metrics.total_tokens || 0).toLocaleString("en")} of ${(metrics.token_limit || 0).toLocaleString("en")} tokens (${metrics.usage_percent ?? 0}%) in ${metrics.total_segments || 0} working segments, ${metrics.pinned_segments_count || 0} pinned`),
        el("div", { class: "factors" }, Object.entries(factors).map(([name, value]) =>
          bar(name, value, `weight ${weights[name] ?? ""}`))))),
    el("ul", { id: "memory-advice", class: "advice" }, advice),
    el("h2", { class: "memory-title" }, `Working set: ${total} segments, ${(working.total_tokens || 0).toLocaleString("en")} tokens`,
      shown < total ? el("span", { class: "muted" }, ` (first ${shown} shown)`) : null),
    shown ? el("table", { id: "working-set", class: "manifest" },
      el("thead", {}, el("tr", {}, ["type", "tokens", "pinned", "age", "text"].map((h) => el("th", {}, h)))),
      el("tbody", {}, segments.map((segment) => segmentRow(project, segment))))
      : el("p", { class: "muted", id: "working-set-empty" }, "No working segments for this task."));
}

// -- views and live updates --------------------------------------------------------------

const loaders = { cards: loadCards, graph: loadGraph, scene: loadScene, memory: loadMemory };

async function show(view) {
  state.view = view;
  for (const tab of document.querySelectorAll(".tab")) tab.setAttribute("aria-pressed", String(tab.dataset.view === view));
  for (const section of document.querySelectorAll(".view")) section.hidden = section.id !== `view-${view}`;
  await refresh();
}

async function refresh() {
  try {
    await loaders[state.view]();
    document.body.dataset.loaded = String(Date.now());
  } catch (error) {
    notice(error.message);
  }
}

function live() {
  const source = new EventSource("/api/events");
  source.addEventListener("open", () => $("#live").classList.add("on"));
  source.addEventListener("error", () => $("#live").classList.remove("on"));
  source.addEventListener("changed", () => refresh());
}

document.addEventListener("DOMContentLoaded", () => {
  for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => show(tab.dataset.view));
  for (const id of ["#f-tag", "#f-priority", "#f-assignee"]) $(id).addEventListener("change", renderCards);
  $("#q").addEventListener("input", () => { clearTimeout(state.searchTimer); state.searchTimer = setTimeout(search, 250); });
  $("#filters").addEventListener("submit", (event) => event.preventDefault());
  $("#new-card").addEventListener("click", () => openEditor(null));
  $("#editor-form").addEventListener("submit", submitEditor);
  $("#budget").addEventListener("input", () => {
    $("#budget-value").textContent = $("#budget").value;
    clearTimeout(state.sceneTimer);
    state.sceneTimer = setTimeout(loadScene, 150);
  });
  $("#scene-card").addEventListener("change", loadScene);
  show("cards");
  live();
});
