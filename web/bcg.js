// ComfyUI-BCG frontend: a badge on the BCG Apply / BCG Warmup Capture nodes saying whether the
// last sampling run replayed CUDA graphs, and a "BCG details" entry in their context menu.
//
// The server sends a "bcg.status" event (a BCGSession.status() JSON) after every sampling run and
// warm-up; nothing is polled. GET /api/bcg/status is read once at start-up so that a reloaded page
// shows the state of the last run. The badge is drawn on the LiteGraph canvas (onDrawForeground),
// ComfyUI's default renderer; the "Nodes 2.0" (Vue) renderer does not draw it.
import { app } from "../../scripts/app.js";
import { api } from "../../scripts/api.js";

const BCG_NODES = new Set(["BCGApply", "BCGWarmupCapture"]);
const COLORS = {
  replayed: { bg: "#2e7d32", fg: "#ffffff" },
  partial: { bg: "#f0a020", fg: "#1a1a1a" },
  off: { bg: "#616161", fg: "#ffffff" },
  ready: { bg: "#1565c0", fg: "#ffffff" },
};
const MAX_REASON = 48;

/** "disabled: no CUDA: ComfyUI runs..." -> "no CUDA"; "not captured: 640x512 txt40 b1" -> "640x512 not captured". */
export function shortReason(reason) {
  if (!reason) return "";
  let text = String(reason).replace(/^disabled: /, "");
  const notCaptured = text.match(/^not captured: (\S+)/);
  if (notCaptured) return `${notCaptured[1]} not captured`;
  const cuts = [": ", "; ", " ("].map((sep) => text.indexOf(sep)).filter((i) => i > 0);
  if (cuts.length) text = text.slice(0, Math.min(...cuts));
  return text.length > MAX_REASON ? text.slice(0, MAX_REASON - 1) + "…" : text;
}

/** The eager reason that cost the most calls in a run. */
function mainReason(eager) {
  const entries = Object.entries(eager || {});
  if (!entries.length) return "";
  entries.sort((a, b) => b[1] - a[1]);
  return entries[0][0];
}

/** {state, text, ...colors} of the badge for one session status. */
export function badgeFor(status) {
  const run = status.last_run;
  // Mode fast replays compiled kernels: never let its badge read like the exact modes'.
  const bcg = status.mode === "fast" ? "BCG fast (not bit-exact)" : "BCG";
  if (run) {
    const counts = `${run.replayed}/${run.calls}`;
    if (run.state === "replayed") return { state: "replayed", text: `${bcg} replayed ${counts}`, ...COLORS.replayed };
    if (run.state === "partial")
      return { state: "partial", text: `${bcg} ${counts} · ${shortReason(mainReason(run.eager))}`, ...COLORS.partial };
    const why = status.disabled || mainReason(run.eager);
    return { state: "off", text: `BCG off: ${shortReason(why)}`, ...COLORS.off };
  }
  if (status.disabled) return { state: "off", text: `BCG off: ${shortReason(status.disabled)}`, ...COLORS.off };
  const warm = status.last_warmup;
  if (warm && warm.refusal) return { state: "off", text: `BCG off: ${shortReason(warm.refusal)}`, ...COLORS.off };
  return { state: "ready", text: `${bcg} ready: ${(status.captured || []).length} graphs`, ...COLORS.ready };
}

const mib = (bytes) => `${((bytes || 0) / 2 ** 20).toFixed(1)} MiB`;

/** Plain-text details of a session: what was captured, its memory, why calls ran eager. */
export function detailsText(status) {
  const capture = status.capture ? `   capture: ${status.capture}` : "";
  const lines = [`Model: ${status.model ?? "unsupported"}   mode: ${status.mode}${capture}   session: ${status.id}`];
  if (status.disabled) lines.push(`Off: ${status.disabled}`);
  if (status.last_run) lines.push(`Last run: ${status.last_run.summary}`);
  const budget = status.memory_budget_bytes ? ` of ${mib(status.memory_budget_bytes)} budget` : "";
  const evicted = status.evictions ? `; ${status.evictions} evicted since load` : "";
  lines.push(`Graph memory: ${mib(status.graph_bytes)}${budget} (pool ${mib(status.pool_bytes)})${evicted}`);
  lines.push("", `Captured signatures (${(status.captured || []).length}):`);
  for (const e of status.captured || [])
    lines.push(`  ${e.label}: ${e.segments} segments, ${e.breaks} breaks, ${e.hits} replays, captured in ${e.capture_seconds}s`);
  if (!(status.captured || []).length) lines.push("  none");
  const misses = Object.entries(status.misses || {}).sort((a, b) => b[1] - a[1]);
  const eager = misses.reduce((sum, [, n]) => sum + n, 0);
  lines.push("", `DiT calls since load: ${status.hits} replayed, ${eager} eager${eager ? " by reason:" : ""}`);
  for (const [reason, n] of misses) lines.push(`  ${n}x ${reason}`);
  const blocked = Object.entries(status.blocked || {});
  if (blocked.length) {
    lines.push("", "Blocked shapes:");
    for (const [shape, reason] of blocked) lines.push(`  ${shape}: ${reason}`);
  }
  const warm = status.last_warmup;
  if (warm) {
    lines.push("", `Last warm-up: ${warm.refusal ? "off: " + warm.refusal : (warm.records || []).length + " shapes"}`);
    for (const note of warm.notes || []) lines.push(`  note: ${note}`);
  }
  return lines.join("\n");
}

function showDetails(node) {
  const status = node.bcgStatus;
  let dialog = document.getElementById("bcg-details");
  if (!dialog) {
    dialog = document.createElement("dialog");
    dialog.id = "bcg-details";
    dialog.style.cssText =
      "max-width:min(900px,90vw);background:#222;color:#ddd;border:1px solid #555;border-radius:8px;padding:12px";
    const pre = document.createElement("pre");
    pre.style.cssText = "white-space:pre-wrap;font:12px monospace;margin:0 0 10px 0;max-height:70vh;overflow:auto";
    const close = document.createElement("button");
    close.textContent = "Close";
    close.onclick = () => dialog.close();
    dialog.append(pre, close);
    document.body.append(dialog);
  }
  dialog.querySelector("pre").textContent = status
    ? `${node.title} (#${node.id})\n${detailsText(status)}`
    : `${node.title} (#${node.id})\nNo BCG status yet: queue the workflow.`;
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

function drawBadge(node, ctx) {
  const badge = node.bcgBadge;
  if (!badge) return;
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

function show(status) {
  for (const id of status.node_ids || []) {
    const node = findNode(id);
    if (!node || !BCG_NODES.has(node.comfyClass ?? node.type)) continue;
    node.bcgStatus = status;
    node.bcgBadge = badgeFor(status);
  }
  app.graph?.setDirtyCanvas(true, true);
}

app.registerExtension({
  name: "bcg.status",

  async setup() {
    api.addEventListener("bcg.status", (e) => show(e.detail));
    try {
      const res = await api.fetchApi("/bcg/status");
      if (res.ok) for (const status of (await res.json()).sessions || []) show(status);
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

  getNodeMenuItems(node) {
    if (!BCG_NODES.has(node.comfyClass ?? node.type)) return [];
    return [{ content: "BCG details", callback: () => showDetails(node) }];
  },
});
