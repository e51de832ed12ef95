// ComfyUI-BCG frontend: a status badge on the BCG Apply / BCG Warmup Capture nodes saying how the
// last sampling run went, and a "BCG details" entry in their context menu.
//
// The server sends a "bcg.status" event (a BCGSession.status() JSON) after every sampling run and
// warm-up, and a "bcg.input_error" event when a BCG node stops on an input it cannot use; nothing
// is polled. GET /api/bcg/status is read once at start-up so that a reloaded page shows the last run.
//
// The badge is one of the node's LiteGraph badges (node.badges, the list the frontend's own node-id
// and price badges use): the classic canvas draws it above the title, and the Nodes 2.0 (Vue)
// renderer shows it in the node's badge row (see setBadge for how that row learns of a change).
// Why calls ran eager is read from the reason kinds the server sends (eager_kinds:
// bcg_runtime/core/reasons.py), never parsed from the text.
import { app } from "../../scripts/app.js";
import { api } from "../../scripts/api.js";

const BCG_NODES = new Set(["BCGApply", "BCGWarmupCapture"]);
export const COLORS = {
  replayed: { bg: "#2e7d32", fg: "#ffffff" },
  partial: { bg: "#f0a020", fg: "#1a1a1a" },
  off: { bg: "#616161", fg: "#ffffff" },
  ready: { bg: "#1565c0", fg: "#ffffff" },
  error: { bg: "#c62828", fg: "#ffffff" },
};

/** What each reason kind (Reason.kind) is called in the badge and the details view. */
export const KIND_LABELS = {
  disabled: "BCG off",
  not_captured: "not captured",
  first_call: "captured on first call",
  not_worth_it: "capture would not repay yet",
  stale: "graph dropped (model changed)",
  unclassified: "model patched",
  options: "options a graph cannot serve",
  capture_failed: "capture failed",
  not_exact: "replay not exact",
  outside_run: "outside a sampling run",
  wrapper: "another wrapper inside BCG",
  limit: "limit reached",
  thread: "multi-GPU split",
  compiled: "torch.compile",
  other: "eager",
};

const kindLabel = (kind) => KIND_LABELS[kind] ?? KIND_LABELS.other;

/** [[reason, count, kind], ...] of a reason -> count map, most calls first. */
function byCount(counts, kinds) {
  return Object.entries(counts || {})
    .map(([reason, n]) => [reason, n, (kinds || {})[reason] ?? "other"])
    .sort((a, b) => b[1] - a[1]);
}

/** Whether an eager reason is the session's "BCG is off" reason (it is shown once, at the top). */
const isOffReason = (status, reason, kind) => kind === "disabled" && !!status.disabled && reason === `disabled: ${status.disabled}`;

/** {state, text, bg, fg} of the badge for one session status (or an input error). */
export function badgeFor(status) {
  if (status.input_error) {
    const field = status.input_error.field;
    return { state: "error", text: field ? `BCG: fix ${field}` : "BCG: input error", ...COLORS.error };
  }
  const run = status.last_run;
  // Mode fast replays compiled kernels: never let its badge read like the exact modes'.
  const bcg = status.mode === "fast" ? "BCG fast (not bit-exact)" : "BCG";
  const off = status.disabled ? `BCG off: ${status.disabled_short || status.disabled}` : null;
  if (run) {
    const counts = `${run.replayed}/${run.calls}`;
    if (run.state === "replayed") return { state: "replayed", text: `${bcg} replayed ${counts}`, ...COLORS.replayed };
    const [main] = byCount(run.eager, run.eager_kinds);
    const why = main ? `${main[1]} ${kindLabel(main[2])}` : "";
    if (run.state === "partial") return { state: "partial", text: `${bcg} ${counts} · ${why}`, ...COLORS.partial };
    return { state: "off", text: off ?? `${bcg} ${counts} · ${why}`, ...COLORS.off };
  }
  if (off) return { state: "off", text: off, ...COLORS.off };
  const warm = status.last_warmup;
  if (warm && warm.refusal) return { state: "off", text: `BCG off: ${warm.refusal_short || warm.refusal}`, ...COLORS.off };
  return { state: "ready", text: `${bcg} ready: ${(status.captured || []).length} graphs`, ...COLORS.ready };
}

const mib = (bytes) => `${((bytes || 0) / 2 ** 20).toFixed(1)} MiB`;

/**
 * The details of a session as sections: [{title, lines: [text], rows: [[cells]], head: [cells]}].
 * Each reason text appears once: the "off" reason at the top, and every count of calls it sent
 * eager points there.
 */
export function detailsSections(status) {
  const sections = [];
  const captured = status.captured || [];
  const banner = { title: "Status", lines: [] };
  if (status.input_error) banner.lines.push(`Stopped: ${status.input_error.message}`);
  if (status.disabled) {
    banner.lines.push(`BCG is off: ${status.disabled}`);
    if (status.disabled_scope === "process")
      banner.lines.push("No model can use BCG in this ComfyUI process (the log says so once, at start-up).");
  } else if (status.last_run) banner.lines.push(`Last run: ${status.last_run.summary}`);
  else banner.lines.push(`Ready: ${captured.length} graphs captured, no sampling run yet.`);
  sections.push(banner);

  const eagerRows = (counts, kinds) =>
    byCount(counts, kinds).map(([reason, n, kind]) =>
      isOffReason(status, reason, kind) ? [String(n), KIND_LABELS.disabled, "(the reason above)"] : [String(n), kindLabel(kind), reason]
    );
  const run = status.last_run;
  if (run) {
    const eager = run.calls - run.replayed;
    sections.push({
      title: "Last run",
      lines: [`${run.calls} DiT calls: ${run.replayed} replayed, ${eager} eager${run.evicted ? `; ${run.evicted} graphs evicted (memory budget)` : ""}`],
      head: eager ? ["Calls", "Why eager", "Reason"] : null,
      rows: eager ? eagerRows(run.eager, run.eager_kinds) : [],
    });
  }

  const budget = status.memory_budget_bytes ? ` of a ${mib(status.memory_budget_bytes)} budget` : "";
  const evicted = status.evictions ? `; ${status.evictions} evicted since load` : "";
  sections.push({
    title: `Captured graphs (${captured.length})`,
    lines: [`Graph memory ${mib(status.graph_bytes)}${budget} (pool ${mib(status.pool_bytes)})${evicted}`],
    head: captured.length ? ["Shape", "Segments", "Breaks", "Replays", "Capture"] : null,
    rows: captured.map((e) => [e.label, String(e.segments), String(e.breaks), String(e.hits), `${e.capture_seconds}s`]),
  });

  const eagerSinceLoad = Object.values(status.eager || {}).reduce((sum, n) => sum + n, 0);
  if (status.hits + eagerSinceLoad > (run ? run.calls : 0)) {
    sections.push({
      title: "Since the model was loaded",
      lines: [`${status.hits + eagerSinceLoad} DiT calls: ${status.hits} replayed, ${eagerSinceLoad} eager`],
      head: eagerSinceLoad ? ["Calls", "Why eager", "Reason"] : null,
      rows: eagerSinceLoad ? eagerRows(status.eager, status.eager_kinds) : [],
    });
  }

  const blocked = Object.entries(status.blocked || {});
  if (blocked.length)
    sections.push({
      title: "Shapes that run eager",
      head: ["Shape", "Why", "Reason"],
      rows: blocked.map(([shape, reason]) => [shape, kindLabel((status.blocked_kinds || {})[shape]), reason]),
    });

  const warm = status.last_warmup;
  if (warm) {
    const lines = [];
    if (warm.refusal && status.disabled && warm.refusal === status.disabled) lines.push("Skipped: BCG is off (the reason above).");
    else if (warm.refusal) lines.push(`Skipped: ${warm.refusal}`);
    else lines.push(`${(warm.records || []).length} shapes in ${(warm.seconds ?? 0).toFixed(1)}s; graph memory ${(warm.graph_mib ?? 0).toFixed(0)} MiB`);
    for (const note of warm.notes || []) lines.push(`Note: ${note}`);
    sections.push({
      title: "Last warm-up",
      lines,
      head: (warm.records || []).length ? ["Shape", "Result", "Detail"] : null,
      rows: (warm.records || []).map((r) => [r.label, r.status, r.reason || (r.exact ? "replay exact" : "")]),
    });
  }
  return sections;
}

/** The header line of a node's details: model, mode, capture policy, session. */
function detailsHeader(status) {
  const parts = [status.model ?? "unsupported model", `mode ${status.mode_from_auto ? `auto (${status.mode})` : status.mode}`];
  if (status.capture) parts.push(`capture ${status.capture}`);
  if (status.id) parts.push(`session ${status.id}`);
  return parts.join(" · ");
}

/** The details as plain text (the dialog's "Copy" button). */
export function detailsText(status) {
  const out = [detailsHeader(status)];
  for (const s of detailsSections(status)) {
    out.push("", s.title);
    for (const line of s.lines || []) out.push(`  ${line}`);
    if (s.head) out.push(`  ${s.head.join(" | ")}`);
    for (const row of s.rows || []) out.push(`  ${row.join(" | ")}`);
  }
  return out.join("\n");
}

const CSS = `
#bcg-details { max-width: min(920px, 92vw); width: 760px; padding: 0; border: 1px solid #4a4a4a; border-radius: 10px;
  background: #202020; color: #ddd; font: 13px/1.45 system-ui, sans-serif; box-shadow: 0 8px 32px #000a; }
#bcg-details::backdrop { background: #0008; }
#bcg-details header { padding: 14px 18px 10px; border-bottom: 1px solid #383838; }
#bcg-details header h2 { margin: 0; font-size: 16px; font-weight: 600; color: #fff; }
#bcg-details header .sub { color: #9a9a9a; margin-top: 2px; }
#bcg-details .body { padding: 6px 18px 12px; max-height: 64vh; overflow: auto; }
#bcg-details section { margin-top: 12px; }
#bcg-details h3 { margin: 0 0 4px; font-size: 12px; font-weight: 600; letter-spacing: .04em; text-transform: uppercase; color: #9fb6d0; }
#bcg-details p { margin: 2px 0; overflow-wrap: anywhere; }
#bcg-details .status { border-left: 4px solid var(--bcg-state); background: #2a2a2a; padding: 8px 10px; border-radius: 4px; }
#bcg-details table { border-collapse: collapse; width: 100%; margin-top: 4px; font-size: 12px; }
#bcg-details th { text-align: left; color: #9a9a9a; font-weight: 500; border-bottom: 1px solid #383838; padding: 3px 8px 3px 0; }
#bcg-details td { padding: 3px 8px 3px 0; border-bottom: 1px solid #2c2c2c; vertical-align: top; overflow-wrap: anywhere; }
#bcg-details td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
#bcg-details footer { display: flex; gap: 8px; justify-content: flex-end; padding: 10px 18px; border-top: 1px solid #383838; }
#bcg-details button { background: #333; color: #eee; border: 1px solid #555; border-radius: 6px; padding: 5px 14px; cursor: pointer; }
#bcg-details button:hover { background: #3d3d3d; }
`;

function element(tag, props = {}, children = []) {
  const el = Object.assign(document.createElement(tag), props);
  el.append(...children);
  return el;
}

function sectionElement(section, index, color) {
  const el = element("section", {}, [element("h3", { textContent: section.title })]);
  const box = index === 0 ? element("div", { className: "status" }) : el;
  if (index === 0) {
    box.style.setProperty("--bcg-state", color);
    el.append(box);
  }
  for (const line of section.lines || []) box.append(element("p", { textContent: line }));
  if (section.head && (section.rows || []).length) {
    const numeric = section.head.map((_, i) => section.rows.every((r) => /^[\d.]+s?$/.test(r[i] ?? "")));
    const head = element("tr", {}, section.head.map((h) => element("th", { textContent: h })));
    const rows = section.rows.map((r) => element("tr", {}, r.map((c, i) => element("td", { textContent: c, className: numeric[i] ? "n" : "" }))));
    el.append(element("table", {}, [element("thead", {}, [head]), element("tbody", {}, rows)]));
  }
  return el;
}

function showDetails(node) {
  let dialog = document.getElementById("bcg-details");
  if (!dialog) {
    document.head.append(element("style", { id: "bcg-details-style", textContent: CSS }));
    dialog = element("dialog", { id: "bcg-details" });
    dialog.addEventListener("click", (e) => e.target === dialog && dialog.close()); // a click on the backdrop
    document.body.append(dialog);
  }
  const status = node.bcgStatus;
  const title = `${node.title} #${node.id}`;
  const copy = element("button", { textContent: "Copy as text" });
  const close = element("button", { textContent: "Close", onclick: () => dialog.close() });
  const body = element("div", { className: "body" });
  if (status) {
    const color = (node.bcgBadge && node.bcgBadge.bg) || COLORS.off.bg;
    detailsSections(status).forEach((s, i) => body.append(sectionElement(s, i, color)));
    copy.onclick = () => navigator.clipboard?.writeText(`${title}\n${detailsText(status)}`);
  } else {
    const text = processOff
      ? `BCG is off in this ComfyUI process: ${processOff.reason}`
      : "No BCG status yet: run the workflow.";
    body.append(element("p", { textContent: text }));
    copy.disabled = true;
  }
  const header = element("header", {}, [
    element("h2", { textContent: `BCG details: ${title}` }),
    element("div", { className: "sub", textContent: status ? detailsHeader(status) : "" }),
  ]);
  dialog.replaceChildren(header, body, element("footer", {}, [copy, close]));
  if (!dialog.open) dialog.showModal();
}

/** The node an executed id names: "12", or "5:12" for node 12 inside subgraph node 5. */
function findNode(id) {
  let graph = app.rootGraph ?? app.graph;
  let node = null;
  for (const part of String(id).split(":")) {
    node = graph?.getNodeById(part) ?? graph?.getNodeById(Number(part));
    if (!node) return null;
    graph = node.subgraph;
  }
  return node;
}

// ------------------------------------------------------------------------------------ the badge
/** The frontend's badge class (a global since the TypeScript LiteGraph); null on older frontends. */
const Badge = () => (typeof window.LGraphBadge === "function" ? window.LGraphBadge : null);

// Nodes 2.0 (the Vue renderer) reads a node's badges inside a Vue computed: frontend 1.49 from the
// badge list it copied when it built the node's view, 1.58 from node.badges; neither re-reads them
// when an extension changes a badge. So the BCG badge getter reads a reactive revision counter,
// which makes the computed depend on it, and every badge change bumps the counter. The counter
// lives in the state of the workspace store (app.extensionManager, a reactive Pinia store): the one
// reactive object an extension is handed. The getter must be in node.badges when the view is
// built (nodeCreated), so that the computed reads it once and tracks the counter from then on.
const REVISION_KEY = "bcgBadgeRevision";
const reactiveState = () => app.extensionManager?.$state ?? null;
const readRevision = () => reactiveState()?.[REVISION_KEY];
function bumpRevision() {
  const state = reactiveState();
  if (state) state[REVISION_KEY] = (state[REVISION_KEY] ?? 0) + 1;
}

/** Put the node's badge getter into node.badges (where missing): an empty badge until a status
 * comes. Returns false on frontends without LGraphBadge (the badge is then drawn by hand). */
function ensureBadgeGetter(node) {
  const Cls = Badge();
  if (!Cls || !Array.isArray(node.badges)) return false;
  if (!node.bcgBadgeGetter) {
    node.bcgBadgeObject ??= new Cls({ text: "" }); // no text: neither renderer shows it
    node.bcgBadgeGetter = () => {
      readRevision();
      return node.bcgBadgeObject;
    };
  }
  if (!node.badges.includes(node.bcgBadgeGetter)) node.badges.push(node.bcgBadgeGetter);
  return true;
}

/** Show ``badge`` on the node, in both renderers. */
function setBadge(node, badge) {
  node.bcgBadge = badge;
  if (!ensureBadgeGetter(node)) return; // drawn by onDrawForeground instead
  node.bcgBadgeObject = new (Badge())({ text: badge.text, fgColor: badge.fg, bgColor: badge.bg, fontSize: 12 });
  bumpRevision();
  // Frontends that refresh a Vue node's badge list on this event (1.49) take the new list too.
  node.graph?.trigger?.("node:property:changed", {
    type: "node:property:changed",
    nodeId: node.id,
    property: "badges",
    oldValue: node.badges,
    newValue: [...node.badges],
  });
}

/** The badge drawn by hand, for frontends without LGraphBadge (classic canvas only). */
function drawBadge(node, ctx) {
  const badge = node.bcgBadge;
  if (!badge || node.bcgBadgeGetter) return;
  const titleHeight = LiteGraph.NODE_TITLE_HEIGHT ?? 30;
  const height = 18;
  ctx.save();
  ctx.font = "bold 12px sans-serif";
  const width = ctx.measureText(badge.text).width + 14;
  const y = -titleHeight - height - 4;
  ctx.fillStyle = badge.bg;
  ctx.beginPath();
  if (ctx.roundRect) ctx.roundRect(0, y, width, height, 5);
  else ctx.rect(0, y, width, height);
  ctx.fill();
  ctx.fillStyle = badge.fg;
  ctx.textBaseline = "middle";
  ctx.fillText(badge.text, 7, y + height / 2 + 1);
  ctx.restore();
}

/** BCG's state for the whole ComfyUI process, from /bcg/status at start-up: null, or
 * ``{state: "off", reason, short}`` where no model can get graphs (no CUDA, --cpu, cudaMallocAsync). */
let processOff = null;

/** A BCG node with no run yet shows the process-wide "off" at once. */
function showProcessOff(node) {
  if (!processOff || node.bcgStatus) return;
  setBadge(node, { state: "off", text: `BCG off: ${processOff.short || processOff.reason}`, ...COLORS.off });
}

function show(status) {
  for (const id of status.node_ids || []) {
    const node = findNode(id);
    if (!node || !BCG_NODES.has(node.comfyClass ?? node.type)) continue;
    node.bcgStatus = status;
    setBadge(node, badgeFor(status));
  }
  app.graph?.setDirtyCanvas(true, true);
}

function showInputError(error) {
  const node = error.node_id == null ? null : findNode(error.node_id);
  if (!node || !BCG_NODES.has(node.comfyClass ?? node.type)) return;
  const status = { ...(node.bcgStatus || {}), input_error: error };
  node.bcgStatus = status;
  setBadge(node, badgeFor(status));
  app.graph?.setDirtyCanvas(true, true);
}

app.registerExtension({
  name: "bcg.status",

  async setup() {
    api.addEventListener("bcg.status", (e) => show(e.detail));
    api.addEventListener("bcg.input_error", (e) => showInputError(e.detail));
    try {
      const res = await api.fetchApi("/bcg/status");
      if (res.ok) {
        const body = await res.json();
        processOff = body.process?.state === "off" ? body.process : null;
        for (const node of app.graph?._nodes ?? []) {
          if (BCG_NODES.has(node.comfyClass ?? node.type)) showProcessOff(node);
        }
        for (const status of body.sessions || []) show(status);
      }
    } catch (err) {
      console.warn("[BCG] could not read /bcg/status:", err);
    }
  },

  async beforeRegisterNodeDef(nodeType, nodeData) {
    if (!BCG_NODES.has(nodeData.name)) return;
    const onDrawForeground = nodeType.prototype.onDrawForeground;
    nodeType.prototype.onDrawForeground = function (ctx) {
      const r = onDrawForeground?.apply(this, arguments);
      drawBadge(this, ctx);
      return r;
    };
  },

  nodeCreated(node) {
    if (!BCG_NODES.has(node.comfyClass ?? node.type)) return;
    ensureBadgeGetter(node);
    showProcessOff(node);
  },

  getNodeMenuItems(node) {
    if (!BCG_NODES.has(node.comfyClass ?? node.type)) return [];
    return [{ content: "BCG details", callback: () => showDetails(node) }];
  },
});
