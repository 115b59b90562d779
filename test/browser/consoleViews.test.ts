import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type McpHttpServer, serveMcpOverHttp } from "../../infra/local/mcpHttp.js";
import {
  asksAbout,
  cutOptions,
  LAPTOP,
  type ModelRule,
  PHONE,
  pageWidth,
  SCREENSHOTS,
  useConsoleStack,
  WIDE,
} from "../support/consoleHarness.js";
import { salesWorkbook } from "../support/documents.js";

// The console in Chromium, part two: code and files (every test that runs Python is here, so one
// stack loads the sandbox), reports, a phone's layout, agents, sessions, and the run page's other
// sections (a model out of reach, a failed tool call, the budget, webhooks). consoleRuns.test.ts has
// the runs decided from the page; each file starts its own stack and browser, and the two run side by side.

describe("the web console in Chromium: pages and sections", () => {
  // TOOL_CATALOG_CACHE_MS=0: a tool source saved here is listed by the very next run.
  const app = useConsoleStack({ TOOL_CATALOG_CACHE_MS: "0" });
  const { api, signIn, openNewRun, openPage } = app;

  const LONG_TASK =
    "Compute 17*23 and then explain, in plain words for a reader who is new to arithmetic, how you got there, step by step, with each intermediate product named";
  const TITLED = { sessionId: "ses_titled", task: "Summarise the quarterly figures for laptop and phone readers. Then list the risks." };
  const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

  // The runs that later cases check but no page needs to start: started here, all at once, while
  // the first case runs, so that each case finds its run ended (or at its budget) instead of waiting for it in turn.
  let runs: Record<"report" | "phone" | "longTask" | "titled" | "budget", Promise<string>>;
  beforeAll(() => {
    const start = (body: Promise<Record<string, unknown>> | Record<string, unknown>) => {
      const started = Promise.resolve(body).then(app.startRun);
      started.catch(() => undefined); // the case that awaits it fails with why
      return started;
    };
    runs = {
      // As the New run form sends it: the spreadsheet uploaded first, then named by the run.
      report: start(
        salesWorkbook()
          .then((workbook) => uploadFile("sales.xlsx", XLSX, workbook))
          .then((fileId) => ({
            input: "Analyse the attached spreadsheet and write an HTML report and slides with a chart of the totals",
            mode: "react",
            approval: { plan: false, tools: "none" },
            files: [fileId],
          })),
      ),
      phone: start({ input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve" }),
      longTask: start({ input: LONG_TASK, mode: "react" }),
      titled: start({ input: TITLED.task, mode: "react", sessionId: TITLED.sessionId }),
      // One token: the first model call's reservation would pass it, so the run pauses before any call.
      budget: start({ input: "What is 2+2? (budget card)", mode: "react", budget: { tokens: 1 } }),
    };
  });

  /** POST /v1/files with the file's bytes; its id. */
  const uploadFile = async (name: string, contentType: string, bytes: Uint8Array) => {
    const response = await fetch(`${app.stack.url}/v1/files?name=${encodeURIComponent(name)}`, {
      method: "POST",
      headers: { authorization: `Bearer ${app.stack.apiKey}`, "content-type": contentType },
      body: bytes,
    });
    const answer: any = await response.json();
    if (typeof answer.fileId !== "string") throw new Error(`${name} was not uploaded: ${JSON.stringify(answer)}`);
    return answer.fileId as string;
  };

  it("shows code to approve as code (line breaks, Python highlighted) and edits it as code, checked against the tool's schema", async () => {
    const page = await openPage();
    await openNewRun(page);
    await page.getByLabel("Task", { exact: true }).fill("Analyse the attached CSV");
    await page.getByLabel("Mode").selectOption("react");
    await page.getByLabel("Approve tool calls").selectOption("write");
    await page
      .getByLabel("Files to attach")
      .setInputFiles({ name: "sales.csv", mimeType: "text/csv", buffer: Buffer.from("region,amount\nnorth,120\nsouth,80\n") });
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/#\/runs\/run_/);
    const runId = page.url().split("#/runs/")[1]!;
    const card = page.getByRole("article", { name: "Allow run_code?" });
    await card.waitFor({ timeout: 60_000 });

    // The program as the agent wrote it: its own lines, monospaced, coloured as Python; no JSON escapes.
    const { pendingInterrupts } = await api(`/v1/runs/${runId}`);
    const agentCode: string = pendingInterrupts[0].arguments.code;
    expect(agentCode.split("\n").length).toBeGreaterThan(3);
    const shown = card.locator("pre.code-arg code.language-python");
    await expect.poll(() => shown.locator(".hljs-keyword").count(), WIDE).toBeGreaterThan(0);
    expect(await shown.textContent()).toBe(agentCode);
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText gives the lines as rendered, which textContent (above) does not
    expect((await shown.innerText()).split("\n").length).toBeGreaterThan(3);
    expect(await shown.evaluate((el) => (globalThis as any).getComputedStyle(el).fontFamily)).toMatch(/mono/i);
    expect(await card.textContent()).not.toContain("\\n");
    await card.screenshot({ path: path.join(SCREENSHOTS, "approve-code-laptop.png") });
    // On a phone the arguments wrap inside the card: nothing cut off at its right edge.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await shown.evaluate((el) => (el.parentElement as any).scrollWidth <= (el.parentElement as any).clientWidth)).toBe(true);
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await card.screenshot({ path: path.join(SCREENSHOTS, "approve-code-phone.png") });
    await page.setViewportSize({ width: 1280, height: 800 });
    // The call's code is shown once in the activity, highlighted, never also as escaped JSON.
    const called = page.locator(".entry.tool-called", { hasText: "→ run_code" }).locator(".args");
    expect(await called.locator("pre.code-arg.code code").textContent()).toBe(agentCode);
    expect(await called.textContent()).not.toContain("\\n");

    // Edit: the code in a field of its own, as code; the list of files as JSON, checked first.
    await card.getByRole("button", { name: "Edit" }).click();
    const codeField = card.getByLabel("code", { exact: true });
    expect(await codeField.inputValue()).toBe(agentCode);
    const files = card.getByLabel("files", { exact: true });
    // Editing has one primary action, Approve, and it sends the edited values.
    expect(await card.locator("button.primary").allTextContents()).toEqual(["Approve with these arguments"]);
    await files.fill('"sales.csv"');
    await card.getByRole("button", { name: "Approve with these arguments" }).click();
    // The problem is said at its field.
    const filesField = card.locator(".field", { has: page.locator('textarea[name="files"]') });
    await expect.poll(() => filesField.getByRole("alert").textContent(), WIDE).toBe("'files' must be array, not string.");
    expect(await card.getByRole("alert").count()).toBe(1);
    await files.fill("[sales.csv");
    await card.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect.poll(() => filesField.getByRole("alert").textContent(), WIDE).toMatch(/^'files' is not valid JSON/);
    await files.fill('["sales.csv"]');
    await codeField.fill(`${agentCode}\nprint("checked by a person")\n`);
    await card.getByRole("button", { name: "Approve with these arguments" }).click();
    // What the edited code printed, beneath the code that ran (the tool result's preview is cut
    // at 2,000 characters, and says first how the arguments were changed: the code, whole).
    await expect
      .poll(() => page.locator(".entry.code .code-output", { hasText: "checked by a person" }).count(), { timeout: 60_000 })
      .toBe(1);
    expect(await page.locator(".entry.code pre.code code").textContent()).toContain('print("checked by a person")');
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
    const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
    expect(events.find((e: any) => e.type === "interrupt.resolved").data.decision).toBe("edit");
    await page.close();
  }, 180_000);

  it("attaches a file to a new run from the keyboard: uploaded, listed with the run, read by the agent", async () => {
    const sales = "region,month,amount\nnorth,jan,120.5\nsouth,jan,80\nnorth,feb,99.5\nsouth,feb,100\neast,feb,50\n";
    const page = await openPage();
    await openNewRun(page);
    await page.getByLabel("Task", { exact: true }).fill("Analyse the attached CSV");
    await page.getByLabel("Mode").selectOption("react");
    // Listening first, a few round trips before the key: Playwright turns on its interception of the
    // chooser when a listener is added, and a key pressed before that opens the native one instead.
    const chooserOpened = page.waitForEvent("filechooser");
    // Tab from the session field to the file field; Space opens the file chooser.
    await page.getByLabel("Session").focus();
    await page.keyboard.press("Tab");
    const attach = page.getByLabel("Files to attach");
    expect(await attach.evaluate((el) => el === (el as any).ownerDocument.activeElement)).toBe(true);
    await page.keyboard.press("Space");
    const chooser = await chooserOpened;
    expect(chooser.isMultiple()).toBe(true);
    await chooser.setFiles({ name: "sales.csv", mimeType: "text/csv", buffer: Buffer.from(sales) });
    await page.screenshot({ path: path.join(SCREENSHOTS, "new-run-laptop.png") });
    await page.keyboard.press("Tab");
    expect(await page.getByRole("button", { name: "Submit" }).evaluate((el) => el === (el as any).ownerDocument.activeElement)).toBe(true);
    await page.keyboard.press("Enter");
    await page.waitForURL(/#\/runs\/run_/);
    const runId = page.url().split("#/runs/")[1]!;

    // The agent ran Python over the attached file, and its figures are the answer.
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 120_000 }).toBe("ended");
    await expect
      .poll(() => page.locator(".entry.tool-called", { hasText: "→ run_code" }).locator(".args").textContent(), WIDE)
      .toContain('"sales.csv"');
    await expect.poll(() => page.locator(".answer").textContent(), WIDE).toContain("sales.csv: 5 rows, 3 columns");
    // Markdown drawn in the answer and in the agent's text: the table of figures is a table.
    const table = page.locator(".answer table").first();
    expect(await table.locator("th").allTextContents()).toEqual(expect.arrayContaining(["column", "sum", "mean"]));
    expect(await table.locator("tr", { hasText: "amount" }).locator("td").allTextContents()).toEqual(
      expect.arrayContaining(["amount", "450.00"]),
    );
    expect(await page.locator(".entry .text table").count()).toBeGreaterThan(0);
    expect(await page.locator(".entry .text").filter({ hasText: "| column |" }).count()).toBe(0);
    // The code the agent ran, as a Python block, with its output beneath it.
    const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
    const ranCode: string = events.find((e: any) => e.type === "tool.called" && e.data.tool === "run_code").data.arguments.code;
    const block = page.locator(".entry.code");
    expect(await block.locator("pre.code code.language-python").textContent()).toBe(ranCode);
    expect(await block.locator("pre.code .hljs-keyword").count()).toBeGreaterThan(0);
    expect(await block.locator("pre.code-output").textContent()).toContain("sales.csv: 5 rows, 3 columns");
    // The file is the run's, and downloads with the bytes that were attached.
    const run = await api(`/v1/runs/${runId}`);
    expect(run.files).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "sales.csv", contentType: "text/csv", bytes: sales.length })]),
    );
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download sales.csv" }).click()]);
    expect(await readFile(await download.path(), "utf8")).toBe(sales);
    await page.close();
  });

  it("shows a report as it is written and previews a deck's slides", async () => {
    const page = await openPage(`#/runs/${await runs.report}`);
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 120_000 }).toBe("ended");
    // Each report drawn from its report.delta events: the findings' table is a table.
    const written = page.locator(".entry.report-delta", { hasText: "Writing data-analysis-report.pptx" });
    expect(await written.locator(".report table").count()).toBeGreaterThan(0);
    expect(await page.locator(".entry.report-delta").count()).toBeGreaterThanOrEqual(2);
    // The deck's preview: its slides, the chart among them.
    await page.getByRole("button", { name: "Preview data-analysis-report.pptx" }).click();
    await expect.poll(() => page.locator(".preview section").count(), WIDE).toBeGreaterThan(2);
    expect(await page.locator(".preview h1").first().textContent()).toBe("Data analysis report");
    expect(await page.locator('.preview img[alt="amount by region"]').getAttribute("src")).toMatch(/^data:image\/png;base64,/);
    // Slides that look like slides: each a 16:9 card with its title, its number in the corner.
    const slide = page.locator(".preview section.slide").nth(1);
    const box = (await slide.boundingBox())!;
    expect(box.width / box.height).toBeCloseTo(16 / 9, 1);
    expect(await slide.evaluate((s) => (globalThis as any).getComputedStyle(s).borderTopStyle)).toBe("solid");
    expect(await slide.locator("small").evaluate((s) => (globalThis as any).getComputedStyle(s).position)).toBe("absolute");

    // The HTML report's preview with its chart fits the page at every width: the chart scales, the page never widens.
    const report = page.getByRole("button", { name: /^Preview .*\.html$/ }).first();
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await report.click();
      const chart = page.locator(".preview figure.chart img");
      await chart.waitFor();
      // The preview may draw again while the run's files refresh: measure both boxes together, once drawn.
      const fits = async () => {
        const [shown, preview] = await Promise.all([chart.boundingBox(), page.locator(".preview").boundingBox()]);
        return shown && preview ? shown.width > 0 && shown.width <= preview.width : undefined;
      };
      await expect.poll(fits, WIDE).toBe(true);
      expect(await pageWidth(page)).toBeLessThanOrEqual(width);
      await page.locator(".files-section").screenshot({ path: path.join(SCREENSHOTS, `report-preview-${width}.png`) });
    }
    await page.close();
  });

  it("says when a filter matches no run, and fits a 390 px phone: runs as cards, the plan first, the preview in view, no sideways scroll", async () => {
    // Submitted before the list is open (beforeAll), so its first load shows the run (consoleRuns.test.ts waits for a live update).
    const runId = await runs.phone;
    const page = await app.browser.context.newPage();
    // The header has one height, signed out and in (it grew by 4 px with the Sign out button).
    const headerHeight = async () => (await page.locator("header.top").boundingBox())!.height;
    await page.goto(app.proxy.url);
    await page.getByLabel("API key").waitFor();
    const signedOut = await headerHeight();
    await signIn(page);
    expect(await headerHeight()).toBe(signedOut);
    await page.locator(`tr[data-run-id="${runId}"]`).waitFor({ timeout: 30_000 });

    // A filter that matches nothing, while runs exist: said so, with the way back.
    await page.getByLabel("Status").selectOption("timed_out");
    await expect.poll(() => page.locator("tbody tr.empty").textContent(), WIDE).toBe("No runs match this filter. Show all runs");
    await page.getByRole("button", { name: "Show all runs" }).click();
    await page.locator(`tr[data-run-id="${runId}"]`).waitFor();

    // The icon browsers ask for.
    const icon = await fetch(`${app.proxy.url}/favicon.ico`);
    expect([icon.status, icon.headers.get("content-type")]).toEqual([200, "image/svg+xml"]);
    expect(await icon.text()).toContain("<svg");

    await page.setViewportSize({ width: 390, height: 844 });
    const sideways = () => pageWidth(page);
    const row = page.locator(`tr[data-run-id="${runId}"]`);
    // Polled: the list refreshes every few seconds, and a row replaced mid-read has no computed style.
    await expect.poll(() => row.evaluate((tr) => (globalThis as any).getComputedStyle(tr).display), WIDE).toBe("block");
    expect(
      await row.locator("td", { hasText: "plan_solve" }).evaluate((td) => (globalThis as any).getComputedStyle(td, "::before").content),
    ).toBe('"Mode"');
    // Polled too: a row replaced mid-read has no box (seen under load: boundingBox() gave null).
    await expect.poll(async () => (await row.boundingBox())?.width, WIDE).toBeLessThanOrEqual(390);
    expect(await sideways()).toBeLessThanOrEqual(390);
    // The session id on one line, whole (it wrapped mid-token beside its name); polled, as the list refreshes.
    const idLines = () =>
      row.locator('td[data-label="Session"] code').evaluate((code: any) => {
        const range = (globalThis as any).document.createRange();
        range.selectNodeContents(code);
        return new Set([...range.getClientRects()].map((rect: any) => Math.round(rect.top))).size;
      });
    await expect.poll(idLines, WIDE).toBe(1);
    await page.screenshot({ path: path.join(SCREENSHOTS, "runs-phone.png"), fullPage: true });

    await page.goto(`${app.proxy.url}/#/runs/${runId}`);
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
    await page.getByRole("button", { name: "Preview report.md" }).waitFor();
    expect(await sideways()).toBeLessThanOrEqual(390);
    const top = async (selector: string) => (await page.locator(selector).boundingBox())!.y;
    expect(await top(".plan-section")).toBeLessThan(await top(".answer-section"));
    expect(await top(".answer-section")).toBeLessThan(await top(".usage-section"));
    // The tasks on a time axis, each with how long it took; the file the run wrote named in the activity.
    expect(await page.locator(".lane .lane-duration").allTextContents()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\d+( ms|(\.\d)? s)$/)]),
    );
    // The axis's three ticks in one unit, none reading like another (a short step once read "0.0 s 0.0 s 0.1 s").
    const ticks = await page.locator(".axis-track").first().locator(".tick").allTextContents();
    expect(ticks[0]).toMatch(/^0 m?s$/);
    expect(new Set(ticks).size).toBe(3);
    expect(new Set(ticks.map((tick) => tick.split(" ")[1])).size).toBe(1);
    expect(await page.locator(".entry.file-created").allTextContents()).toEqual([expect.stringContaining("report.md")]);
    await page.getByRole("button", { name: "Preview report.md" }).click();
    await page.locator(".preview h1").waitFor();
    await expect
      .poll(async () => {
        const box = (await page.locator(".preview").boundingBox())!;
        // Scrolled to a whole pixel: an element at a fractional offset may sit a fraction above it.
        return Math.round(box.y) >= 0 && box.y < 844;
      }, WIDE)
      .toBe(true);
    expect(await sideways()).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(SCREENSHOTS, "run-phone-preview.png") });

    // The new-run form's Mode select shows each choice whole, explained under it (a long option was cut).
    await openNewRun(page);
    const mode = page.getByLabel("Mode");
    expect(await cutOptions(mode)).toEqual([]);
    expect(await page.locator(`#${await mode.getAttribute("aria-describedby")}`).textContent()).toContain(
      "plan_solve: a planner and parallel executors",
    );
    expect(await sideways()).toBeLessThanOrEqual(390);
    await page.close();
  });

  it("saves the tenant's instructions and a saved agent on the Agents page, and runs as that agent from New run", async () => {
    const page = await openPage();
    await page.getByRole("link", { name: "Agents", exact: true }).click();
    await page.getByRole("heading", { name: "Agents", exact: true }).waitFor();
    await page.getByLabel("Tenant instructions").fill("House rule: show the working.");
    await page.getByRole("button", { name: "Save instructions" }).click();
    await expect.poll(async () => (await api("/v1/settings")).instructions, WIDE).toBe("House rule: show the working.");
    await page.getByLabel("Name", { exact: true }).fill("adder");
    await page.getByLabel("Configuration (JSON)").fill(JSON.stringify({ mode: "react", tools: ["calculator", "launch_rockets"] }));
    await page.getByRole("button", { name: "Save agent" }).click();
    // A tool the tenant lacks: the API's message is shown, and nothing is saved.
    await expect.poll(() => page.getByRole("alert").filter({ hasText: "launch_rockets" }).isVisible(), WIDE).toBe(true);
    expect((await api("/v1/agents")).agents).toEqual([]);
    await page.getByLabel("Configuration (JSON)").fill(JSON.stringify({ mode: "react", tools: ["calculator"], description: "Adds." }));
    await page.getByRole("button", { name: "Save agent" }).click();
    await expect.poll(() => page.getByRole("cell", { name: "calculator", exact: true }).isVisible(), WIDE).toBe(true);
    await openNewRun(page);
    await page.getByLabel("Task", { exact: true }).fill("Compute 20+22");
    await expect.poll(() => page.getByLabel("Saved agent").locator("option").count(), WIDE).toBe(2);
    // On a phone each saved agent shows whole in the closed select; its version and mode are in the hint.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await cutOptions(page.getByLabel("Saved agent"))).toEqual([]);
    await page.getByLabel("Saved agent").selectOption("adder");
    expect(await page.locator(`#${await page.getByLabel("Saved agent").getAttribute("aria-describedby")}`).textContent()).toContain(
      "adder: version 1, react.",
    );
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByLabel("Instructions", { exact: true }).fill("Run rule: be brief.");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/#\/runs\/run_/);
    const runId = page.url().split("#/runs/")[1]!;
    const run = await api(`/v1/runs/${runId}`);
    expect(run).toMatchObject({
      requestedMode: "react",
      agent: { name: "adder", version: 1, tools: ["calculator"] },
      instructions: "House rule: show the working.\n\nRun rule: be brief.",
    });
    await fetch(`${app.stack.url}/v1/settings`, {
      method: "PUT",
      headers: { authorization: `Bearer ${app.stack.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ instructions: "" }),
    });
    await page.close();
  });

  it("a model that cannot be reached says so on the run at 1280 and 390 px: each retry as it happens, and what the run waits for", async () => {
    const marker = "model down";
    let pageOpen!: () => void;
    const opened = new Promise<void>((resolve) => (pageOpen = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let failures = 0;
    let firstFailure = 0;
    // The run's first two calls cannot reach the model (once the page shows the run); the third waits until released.
    const rule: ModelRule = async (request) => {
      if (!asksAbout(request, marker)) return undefined;
      await opened;
      if (failures++ < 2) {
        firstFailure ||= Date.now();
        return "refuse";
      }
      await released;
      return undefined;
    };
    app.modelRules.add(rule);
    const page = await openPage();
    try {
      const { runId } = await api("/v1/runs", { input: `What is 17*23? (${marker})`, mode: "react" });
      await page.goto(`${app.proxy.url}/#/runs/${runId}`);
      await expect.poll(() => page.locator(".connection").textContent(), { timeout: 30_000 }).toBe("live");
      pageOpen();

      const retries = page.locator(".entry.model-retrying");
      await retries.first().waitFor({ timeout: 30_000 });
      const shownAfterMs = Date.now() - firstFailure;
      await expect.poll(() => retries.count(), { timeout: 30_000 }).toBe(2);
      expect(await retries.allTextContents()).toEqual([
        expect.stringMatching(/^react↻ Model call failed: the model could not be reached \(.+\)\. Retry 1 of 2 in \d\.\d s\.$/),
        expect.stringMatching(/Retry 2 of 2 in \d\.\d s\.$/),
      ]);
      // While the call waits, the run's status says what for.
      await expect
        .poll(() => page.locator(".meta .status-detail").textContent(), { timeout: 30_000 })
        .toMatch(/^Waiting for the model \(react\): the model could not be reached \(.+\); retry 2 of 2 at /);
      // The same run at each width while it waits: nothing wider than the screen.
      for (const { width, height } of [LAPTOP, PHONE]) {
        await page.setViewportSize({ width, height });
        expect(await pageWidth(page)).toBeLessThanOrEqual(width);
        await page.screenshot({ path: path.join(SCREENSHOTS, `model-retry-${width}.png`) });
      }
      // Within seconds of the first failure, not at the end of the retries (wide margin for a busy machine).
      expect(shownAfterMs).toBeLessThan(5_000);
      const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
      const first = events.find((e: any) => e.type === "model.retrying");
      expect(Date.parse(first.at) - firstFailure).toBeLessThan(5_000);
      expect(first.data).toMatchObject({ agent: "react", attempt: 1, retries: 2 });

      release();
      await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
      await expect.poll(() => page.locator(".meta .badge").textContent(), WIDE).toBe("succeeded");
      expect(await page.locator(".meta .status-detail").count()).toBe(0);
    } finally {
      release();
      app.modelRules.delete(rule);
      await page.close();
    }
  });

  it("shows the whole of a long task on the run page at 1280 and 390 px, on demand", async () => {
    const task = LONG_TASK;
    const page = await openPage(`#/runs/${await runs.longTask}`);
    try {
      await expect.poll(() => page.locator("h1").textContent(), WIDE).toBe(`${task.slice(0, 79)}…`);
      const whole = page.locator("details.whole-task");
      for (const { width, height } of [LAPTOP, PHONE]) {
        await page.setViewportSize({ width, height });
        // Closed again after the first width: each width opens it.
        if (await whole.evaluate((details: any) => details.open)) await whole.getByText("Show the whole task").click();
        expect(await whole.locator(".task-text").isVisible()).toBe(false);
        await whole.getByText("Show the whole task").click();
        expect(await whole.locator(".task-text").textContent()).toBe(task);
        expect(await whole.locator(".task-text").isVisible()).toBe(true);
        expect(await pageWidth(page)).toBeLessThanOrEqual(width);
      }
    } finally {
      await page.close();
    }
  });

  it("lists sessions by the title their first turn got, and the runs list shows it for that run, at 1280 and 390 px", async () => {
    const { sessionId, task } = TITLED;
    const runId = await runs.titled;
    // The offline model's title: the request's first sentence, at most six words.
    const title = "Summarise the quarterly figures for laptop";
    await expect.poll(async () => (await api(`/v1/sessions/${sessionId}`)).title, { timeout: 60_000 }).toBe(title);
    const page = await openPage();
    try {
      for (const { width, height } of [LAPTOP, PHONE]) {
        await page.setViewportSize({ width, height });
        await page.getByRole("link", { name: "Sessions", exact: true }).click();
        await page.getByRole("heading", { name: "Sessions" }).waitFor(WIDE);
        const row = page.locator(`tr[data-session-id="${sessionId}"]`);
        await row.waitFor({ timeout: 30_000 });
        expect(await row.locator("td.task").textContent()).toBe(title);
        expect(await row.getByRole("link", { name: runId }).count()).toBe(1);
        expect(await pageWidth(page)).toBeLessThanOrEqual(width);
        await page.screenshot({ path: path.join(SCREENSHOTS, `sessions-${width === PHONE.width ? "phone" : "laptop"}.png`) });

        // The session's title leads to its runs; the run that was titled shows the title, its task on hover.
        await row.getByRole("link", { name: title }).click();
        const runRow = page.locator(`tr[data-run-id="${runId}"]`);
        await runRow.waitFor({ timeout: 30_000 });
        expect(await runRow.locator("td.task").textContent()).toBe(title);
        expect(await runRow.locator("td.task a").getAttribute("title")).toBe(task);
      }
    } finally {
      await page.close();
    }
  });

  describe("the run page's Webhooks section", () => {
    it("shows a delivery whose receiver failed as pending with its failed attempt and next retry, then delivered", async () => {
      // A receiver whose first answer is 500 and whose later ones wait until the page has shown the pending retry.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const answered: number[] = [];
      const receiver = createServer(async (request, response) => {
        for await (const _ of request);
        if (answered.length === 0) {
          answered.push(500);
          return response.writeHead(500).end("down for a moment");
        }
        await released;
        answered.push(200);
        response.writeHead(200).end("ok");
      });
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
      const page = await openPage();
      try {
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
        const { runId } = await api("/v1/runs", { input: "What is 2+2? (webhook section)", mode: "react", webhook: { url } });
        await page.goto(`${app.proxy.url}/#/runs/${runId}`);
        const section = page.getByRole("region", { name: "Webhooks" });
        const delivery = section.locator("li.delivery");
        await expect.poll(() => delivery.getAttribute("data-status"), { timeout: 90_000 }).toBe("pending");
        // The failed first attempt, and the retry to come (a held retry that timed out meanwhile is another failed attempt).
        await expect.poll(() => section.locator(".attempts li").count(), { timeout: 60_000 }).toBeGreaterThanOrEqual(1);
        expect(await section.locator("p.muted").first().textContent()).toBe(url);
        expect(await delivery.locator("strong").textContent()).toMatch(
          /^run\.succeeded: pending, \d+ attempts?, next retry (in \d+ s|due now)$/,
        );
        expect(await section.locator(".attempts li").first().textContent()).toMatch(/^#1 ✗ HTTP 500 \(\d+ ms\)$/);
        expect(await section.locator(".attempts li.ok").count()).toBe(0);

        release();
        await expect.poll(() => delivery.getAttribute("data-status"), { timeout: 60_000 }).toBe("delivered");
        const attempts = await section.locator(".attempts li").allTextContents();
        expect(attempts[0]).toMatch(/^#1 ✗ HTTP 500/);
        expect(attempts.at(-1)).toMatch(/^#\d+ ✓ HTTP 200 \(\d+ ms\)$/);
        expect(await delivery.locator("strong").textContent()).toBe(`run.succeeded: delivered, ${attempts.length} attempts`);
        expect(answered.at(-1)).toBe(200);
      } finally {
        release();
        await page.close();
        receiver.closeAllConnections();
        await new Promise<void>((resolve) => receiver.close(() => resolve()));
      }
    });
  });

  describe("a failed tool call's card", () => {
    /** A billing tool source whose key can expire: while `expired`, every call is refused 401 (a failure a person can fix). */
    const invoices = { expired: false, sent: [] as string[] };
    let billing: McpHttpServer | undefined;
    afterAll(async () => {
      if (billing)
        await fetch(`${app.stack.url}/v1/tool-sources/billing`, {
          method: "DELETE",
          headers: { authorization: `Bearer ${app.stack.apiKey}` },
        });
      await billing?.close();
    });

    it("a tool that fails for a fixable reason pauses on a card with the call and the error; Retry runs it again and the run succeeds, at 1280 and 390 px", async () => {
      billing = await serveMcpOverHttp(
        () => {
          const server = new McpServer({ name: "billing", version: "1.0.0" });
          server.registerTool("send_invoice", { description: "Sends an invoice.", inputSchema: { to: z.string() } }, async ({ to }) => {
            invoices.sent.push(to);
            return { content: [{ type: "text" as const, text: `invoice sent to ${to}` }] };
          });
          return server;
        },
        { refuse: ({ method }) => (invoices.expired && method === "tools/call" ? 401 : undefined) },
      );
      // This file's stack keeps no tool list (TOOL_CATALOG_CACHE_MS=0): the next run lists the new tool.
      expect((await api("/v1/tool-sources", { name: "billing", url: billing.url })).name).toBe("billing");
      const to = "acme";
      invoices.expired = true;
      const { runId } = await api("/v1/runs", { input: `use billing__send_invoice {"to": "${to}"}`, mode: "react" });
      const page = await openPage(`#/runs/${runId}`);
      try {
        const card = page.getByRole("article", { name: "billing__send_invoice failed" });
        await card.waitFor({ timeout: 60_000 });
        expect(await card.locator(".argument", { hasText: "to" }).locator(".text-arg").textContent()).toBe(to);
        expect(await card.locator(".tool-failure").textContent()).toContain("401");
        expect(await card.getByRole("button").allTextContents()).toEqual(["Retry", "Skip", "Edit", "Fail"]);
        expect(invoices.sent).not.toContain(to);
        // The card at each width: nothing wider than the screen.
        for (const { width, height } of [LAPTOP, PHONE]) {
          await page.setViewportSize({ width, height });
          expect(await pageWidth(page)).toBeLessThanOrEqual(width);
          await page.screenshot({ path: path.join(SCREENSHOTS, `tool-failure-${width}.png`) });
        }

        invoices.expired = false; // the key is renewed
        await card.getByRole("button", { name: "Retry" }).click();
        await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
        await expect.poll(() => page.locator(".meta .badge").textContent(), WIDE).toBe("succeeded");
        await expect.poll(() => page.locator(".answer").textContent(), WIDE).toContain(`invoice sent to ${to}`);
        expect(await card.count()).toBe(0);
        expect(invoices.sent.filter((sent) => sent === to)).toEqual([to]);
        const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
        expect(events.filter((e: any) => e.type === "interrupt.resolved").map((e: any) => [e.data.kind, e.data.decision])).toEqual([
          ["tool_failure", "retry"],
        ]);
      } finally {
        invoices.expired = false;
        await page.close();
      }
    });
  });
  describe("the budget card", () => {
    it("a run that stops at its token budget shows the budget card and what it spent; Extend lets it finish", async () => {
      // One token (beforeAll): the first model call's reservation would pass it, so the run paused before any call.
      const runId = await runs.budget;
      const page = await openPage(`#/runs/${runId}`);
      try {
        const card = page.getByRole("article", { name: "The run is at its budget" });
        await card.waitFor({ timeout: 60_000 });
        const waiting = await api(`/v1/runs/${runId}`);
        expect(waiting.status).toBe("awaiting_input");
        const pending = waiting.interrupts.find((i: any) => i.status === "pending");
        expect(pending.kind).toBe("budget");
        expect(await card.getAttribute("data-interrupt-id")).toBe(pending.interruptId);
        expect(await card.locator(".summary").textContent()).toBe(pending.summary);
        expect(await page.locator("dd.budget").textContent()).toBe(
          `${waiting.budget.spent.tokens} tokens spent of 1 tokens (at the budget: pause)`,
        );

        await card.getByLabel("Tokens to add (empty: as much again)").fill("1000000");
        await card.getByRole("button", { name: "Extend" }).click();
        await expect.poll(async () => (await api(`/v1/runs/${runId}`)).status, { timeout: 90_000 }).toBe("succeeded");
        await card.waitFor({ state: "detached", ...WIDE });
        const ended = await api(`/v1/runs/${runId}`);
        expect(ended.interrupts.find((i: any) => i.interruptId === pending.interruptId).status).toBe("resolved");
        const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
        expect(events.find((e: any) => e.type === "interrupt.resolved").data).toMatchObject({
          interruptId: pending.interruptId,
          decision: "approve",
        });
        expect(ended.budget.tokens).toBe(1_000_001);
        // What the run spends can still grow after its end (Finalize titles the session with the
        // model): the page follows the run's own figure, whatever it ends at.
        await expect
          .poll(async () => {
            const spent = (await api(`/v1/runs/${runId}`)).budget.spent.tokens;
            return (await page.locator("dd.budget").textContent()) === `${spent} tokens spent of 1000001 tokens (at the budget: pause)`;
          }, WIDE)
          .toBe(true);
      } finally {
        await page.close();
      }
    });
  });
});
