// The pack in ComfyUI's page, as a user meets it, in headless Chromium (playwright-core, the
// system Chromium; nothing is downloaded). Driven by tests/e2e/test_ui_tour.py, which starts the
// server and asserts on what this prints.
//
//   node ui_tour.cjs CONFIG.json
//
// CONFIG: {url, out, chromium, prompt (the e2e API prompt), apply_id, warmup_id, steps, cuda,
//          templates: [names], bad_resolutions, run_time_resolutions}
// Writes numbered screenshots into CONFIG.out and prints one JSON line: {checks: {...}, shots: [...]}.
// A step that fails records its error under checks and the tour goes on, so one run shows all.
const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const checks = {};
const shots = [];
const pageErrors = [];

async function shot(page, name) {
  const file = path.join(config.out, `${String(shots.length + 1).padStart(2, "0")}_${name}.png`);
  await page.screenshot({ path: file });
  shots.push(file);
}

async function step(name, fn) {
  try {
    checks[name] = await fn();
  } catch (e) {
    checks[name] = { error: String(e && e.stack ? e.stack : e).slice(0, 2000) };
  }
}

const setting = (page, id, value) => page.evaluate(([id, value]) => app.extensionManager.setting.set(id, value), [id, value]);

/** Pixels of `rgb` in the strip just above a node's title on the classic canvas (where node badges are drawn). */
async function badgePixels(page, nodeId, rgb) {
  const box = await page.evaluate((id) => {
    const n = app.graph.getNodeById(Number(id));
    const ds = app.canvas.ds;
    const r = app.canvas.canvas.getBoundingClientRect();
    const title = LiteGraph.NODE_TITLE_HEIGHT;
    const toPage = (x, y) => [(x + ds.offset[0]) * ds.scale + r.left, (y + ds.offset[1]) * ds.scale + r.top];
    const [x0, y0] = toPage(n.pos[0] - 40, n.pos[1] - title - 30);
    const [x1, y1] = toPage(n.pos[0] + n.size[0] + 40, n.pos[1] - title);
    return { x: Math.max(0, x0), y: Math.max(0, y0), width: x1 - Math.max(0, x0), height: y1 - Math.max(0, y0) };
  }, nodeId);
  const png = await page.screenshot({ clip: box });
  // Count matching pixels in the browser (it decodes PNG itself).
  return page.evaluate(
    async ([b64, rgb]) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext("2d");
      ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - rgb[0]) < 6 && Math.abs(d[i + 1] - rgb[1]) < 6 && Math.abs(d[i + 2] - rgb[2]) < 6) n++;
      return n;
    },
    [png.toString("base64"), rgb]
  );
}

const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));

async function waitStatus(page, ids, timeout) {
  await page.waitForFunction(
    (ids) => ids.every((id) => app.graph.getNodeById(Number(id))?.bcgStatus?.last_run),
    ids,
    { timeout }
  );
}

async function queue(page) {
  await page.evaluate(() => app.queuePrompt(0, 1));
}

(async () => {
  const browser = await chromium.launch({
    executablePath: config.chromium,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  await page.goto(config.url);
  await page.waitForFunction(() => window.app?.graph && app.extensions?.some((e) => e.name === "bcg.status"), null, { timeout: 120000 });
  checks.frontend = await page.evaluate(() => window.__COMFYUI_FRONTEND_VERSION__ ?? null);
  await setting(page, "Comfy.VueNodes.Enabled", false);

  // ------------------------------------------------------------------ templates
  await step("templates", async () => {
    await page.evaluate(() => app.extensionManager.command.execute("Comfy.BrowseTemplates"));
    const pack = page.getByText("ComfyUI-BCG", { exact: true }).first();
    await pack.waitFor({ timeout: 30000 });
    await pack.click();
    const found = {};
    for (const name of config.templates) {
      const card = page.getByText(name, { exact: true }).first();
      await card.waitFor({ timeout: 30000 });
      found[name] = true;
    }
    await page.waitForTimeout(1500); // thumbnails load
    const thumbs = await page.evaluate(() =>
      [...document.querySelectorAll("img")].filter((i) => /ComfyUI-BCG/.test(decodeURIComponent(i.src))).map((i) => ({ src: i.src, w: i.naturalWidth }))
    );
    await shot(page, "templates");
    return { found, thumbs };
  });
  for (const name of config.templates) {
    await step(`template ${name}`, async () => {
      const dialogOpen = await page.getByText(name, { exact: true }).first().isVisible().catch(() => false);
      if (!dialogOpen) {
        await page.evaluate(() => app.extensionManager.command.execute("Comfy.BrowseTemplates"));
        await page.getByText("ComfyUI-BCG", { exact: true }).first().click();
      }
      await page.getByText(name, { exact: true }).first().click();
      await page.waitForFunction((n) => app.graph._nodes.length > 3, name, { timeout: 30000 });
      await page.waitForTimeout(1500);
      await shot(page, `template_${name.replace(/[^A-Za-z0-9]+/g, "_")}`);
      const nodes = await page.evaluate(() => ({
        count: app.graph._nodes.length,
        unknown: app.graph._nodes.filter((n) => !LiteGraph.registered_node_types[n.type]).map((n) => n.type),
        bcg: app.graph._nodes.filter((n) => n.type.startsWith("BCG")).map((n) => n.type),
      }));
      await page.keyboard.press("Escape"); // the missing-models dialog, where the models are not installed
      await page.waitForTimeout(500);
      return nodes;
    });
  }

  // ------------------------------------------------------------------ a run, classic canvas
  await step("run classic", async () => {
    await page.evaluate((p) => app.loadApiJson(p, "bcg e2e"), config.prompt);
    await page.waitForTimeout(1000);
    await queue(page);
    await waitStatus(page, [config.apply_id, config.warmup_id], 600000);
    await page.evaluate(() => app.canvas.setDirty(true, true));
    await page.waitForTimeout(800);
    await shot(page, "badge_classic");
    const badges = await page.evaluate(
      (ids) => ids.map((id) => {
        const n = app.graph.getNodeById(Number(id));
        return { ...n.bcgBadge, inBadges: n.badges.includes(n.bcgBadgeGetter) };
      }),
      [config.apply_id, config.warmup_id]
    );
    const pixels = [];
    for (const [i, id] of [config.apply_id, config.warmup_id].entries()) pixels.push(await badgePixels(page, id, hex(badges[i].bg)));
    const status = await page.evaluate((id) => app.graph.getNodeById(Number(id)).bcgStatus, config.apply_id);
    return { badges, pixels, status };
  });

  // ------------------------------------------------------------------ the details view
  await step("details", async () => {
    const [x, y] = await page.evaluate((id) => {
      const n = app.graph.getNodeById(Number(id));
      const ds = app.canvas.ds;
      const r = app.canvas.canvas.getBoundingClientRect();
      return [(n.pos[0] + 60 + ds.offset[0]) * ds.scale + r.left, (n.pos[1] - LiteGraph.NODE_TITLE_HEIGHT / 2 + ds.offset[1]) * ds.scale + r.top];
    }, config.apply_id);
    await page.mouse.click(x, y, { button: "right" });
    await page.getByText("BCG details", { exact: true }).first().click();
    const dialog = page.locator("#bcg-details");
    await dialog.waitFor({ state: "visible" });
    await page.waitForTimeout(300);
    await shot(page, "details");
    const text = await dialog.innerText();
    const headings = await dialog.locator("h3").allInnerTexts();
    await dialog.getByText("Close", { exact: true }).click();
    return { text, headings };
  });

  // ------------------------------------------------------------------ Nodes 2.0 (Vue)
  await step("run vue", async () => {
    await setting(page, "Comfy.VueNodes.Enabled", true);
    await page.waitForSelector(`[data-node-id="${config.apply_id}"]`, { timeout: 30000 });
    // a second run with the new renderer on: the badge must follow it there too
    await page.evaluate((ids) => ids.forEach((id) => (app.graph.getNodeById(Number(id)).bcgStatus = null)), [config.apply_id, config.warmup_id]);
    await page.evaluate(() => {
      const w = app.graph._nodes.find((n) => n.type === "KSampler").widgets.find((w) => w.name === "seed");
      w.value = (w.value || 0) + 1;
    });
    await queue(page);
    await waitStatus(page, [config.apply_id, config.warmup_id], 600000);
    await page.waitForTimeout(1000);
    await shot(page, "badge_vue");
    const texts = {};
    for (const id of [config.apply_id, config.warmup_id]) {
      const want = await page.evaluate((id) => app.graph.getNodeById(Number(id)).bcgBadge.text, id);
      const el = page.locator(`[data-node-id="${id}"]`).getByText(want, { exact: true });
      texts[id] = { want, shown: await el.count(), visible: (await el.count()) ? await el.first().isVisible() : false };
    }
    await setting(page, "Comfy.VueNodes.Enabled", false);
    await page.waitForTimeout(1000);
    return texts;
  });

  // ------------------------------------------------------------------ a bad input (validation)
  await step("bad input", async () => {
    await page.evaluate(([id, v]) => {
      app.graph.getNodeById(Number(id)).widgets.find((w) => w.name === "resolutions").value = v;
    }, [config.warmup_id, config.bad_resolutions]);
    const response = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/prompt") && r.request().method() === "POST", { timeout: 60000 }),
      queue(page),
    ]).then(([r]) => r.json());
    await page.waitForTimeout(1500);
    await shot(page, "bad_input");
    const marked = await page.evaluate(() => app.graph._nodes.filter((n) => n.has_errors).map((n) => String(n.id)));
    return { node_errors: response.node_errors ?? null, marked };
  });

  // ------------------------------------------------------------------ a value judged at run time
  await step("run-time error", async () => {
    await page.keyboard.press("Escape");
    await page.evaluate(([id, v]) => {
      app.graph.getNodeById(Number(id)).widgets.find((w) => w.name === "resolutions").value = v;
    }, [config.warmup_id, config.run_time_resolutions]);
    const error = page.evaluate(
      () => new Promise((resolve) => comfyAPI.api.api.addEventListener("execution_error", (e) => resolve(e.detail), { once: true }))
    );
    await queue(page);
    const detail = await error;
    await page.waitForFunction((id) => app.graph.getNodeById(Number(id))?.bcgBadge?.state === "error", config.warmup_id, { timeout: 60000 });
    await page.evaluate(() => app.canvas.setDirty(true, true));
    await page.waitForTimeout(1500);
    await shot(page, "run_time_error");
    const badge = await page.evaluate((id) => app.graph.getNodeById(Number(id)).bcgBadge, config.warmup_id);
    return { node_type: detail.node_type, message: detail.exception_message, traceback: detail.traceback, badge };
  });

  checks.page_errors = pageErrors;
  await browser.close();
  process.stdout.write(JSON.stringify({ checks, shots }) + "\n");
})().catch((e) => {
  process.stdout.write(JSON.stringify({ checks: { ...checks, fatal: String(e.stack || e) }, shots }) + "\n");
  process.exit(1);
});
