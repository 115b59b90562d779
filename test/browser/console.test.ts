import { mkdir, readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type McpHttpServer, serveMcpOverHttp } from "../../infra/local/mcpHttp.js";
import { type OfflineModel, startOfflineModel } from "../../infra/offlineModel/server.js";
import { launchBrowser } from "../support/browser.js";
import { salesWorkbook } from "../support/documents.js";
import { startDropProxy } from "../support/dropProxy.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type Fault, type ModelProxy, type ProxiedRequest, startModelProxy } from "../support/modelProxy.js";

/** Screenshots land here (test output, not committed); docs/local-stack.md links the committed copies in test/screenshots/. */
const OUTPUT = path.resolve("test/output/screenshots");

/** Room for a busy machine: each poll waits for the API, not for a timer. */
const WIDE = { timeout: 15_000 };

describe("the web console in Chromium", () => {
  let model: OfflineModel;
  let modelProxy: ModelProxy;
  let stack: RunningStack;
  let proxy: Awaited<ReturnType<typeof startDropProxy>>;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  /** While set, executors' model calls wait for it (the stack's offline model is reached through modelProxy). */
  let holdExecutors: Promise<void> | undefined;
  /** While set, decides how each model call fails (undefined: it goes through). */
  let modelFault: ((request: ProxiedRequest) => Fault | undefined | Promise<Fault | undefined>) | undefined;

  beforeAll(async () => {
    await mkdir(OUTPUT, { recursive: true });
    try {
      model = await startOfflineModel({ latencyMs: 50 });
      modelProxy = await startModelProxy(model.url, async (_, request) => {
        if (request.role === "executor") await holdExecutors;
        return modelFault?.(request);
      });
      // The browser starts while the stack does; whichever started is stopped below if the other did not.
      const [launched, started] = await Promise.allSettled([
        launchBrowser(),
        // Session titles on (the test stacks' default is off): the Sessions page shows them.
        startStack({ OPENAI_BASE_URL: modelProxy.url, STEPWISE_MODEL: "stepwise-offline", STEPWISE_SESSION_TITLES: "true" }),
      ]);
      if (launched.status === "fulfilled") browser = launched.value;
      if (started.status === "fulfilled") stack = started.value;
      for (const result of [launched, started]) if (result.status === "rejected") throw result.reason;
      proxy = await startDropProxy(stack.url);
    } catch (error) {
      await Promise.all([browser?.close(), proxy?.close(), stack?.stop()]);
      await Promise.all([modelProxy?.close(), model?.close()]);
      throw error;
    }
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await stack?.stop();
    await Promise.all([modelProxy?.close(), model?.close()]);
  });

  const api = async (pathname: string, body?: unknown) => {
    const response = await fetch(`${stack.url}${pathname}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return response.json() as Promise<any>;
  };

  async function signIn(page: Page) {
    await page.goto(proxy.url);
    await page.getByLabel("API key").fill(stack.apiKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    // Room for a busy machine: the Runs page waits for its first read of the API.
    await expect.poll(() => page.getByRole("heading", { name: "Runs" }).isVisible(), WIDE).toBe(true);
  }

  /**
   * Opens the new-run form and waits for it: until the hash change has rendered it, the page still
   * shows the run before, whose "Tasks" region would match a loose "Task" label.
   */
  async function openNewRun(page: Page) {
    await page.getByRole("link", { name: "New run", exact: true }).first().click();
    await page.getByRole("heading", { name: "New run", exact: true }).waitFor();
  }

  /** The options of a select whose text does not fit the closed select (shown cut). */
  const cutOptions = (select: Locator) =>
    select.evaluate((element: any) => {
      const style = (globalThis as any).getComputedStyle(element);
      const context = (globalThis as any).document.createElement("canvas").getContext("2d");
      context.font = style.font;
      // The text's room: the box less its padding and the drop-down arrow (about 20 px in Chromium).
      const room = element.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight) - 20;
      return [...element.options].filter((option: any) => context.measureText(option.text).width > room).map((option: any) => option.text);
    });

  async function submit(page: Page, task: string) {
    await openNewRun(page);
    await page.getByLabel("Task", { exact: true }).fill(task);
    await page.getByLabel("Mode").selectOption("plan_solve");
    await page.getByLabel("Approve tool calls").selectOption("write");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/#\/runs\/run_/);
    return page.url().split("#/runs/")[1]!;
  }

  /** The console's event log, as (seq, type) in the order it showed them. */
  const shownEvents = (page: Page) =>
    page
      .locator("#event-log li")
      .evaluateAll((items) => items.map((li) => ({ seq: Number((li as any).dataset.seq), type: (li as any).dataset.type })));

  it("signs in, runs plan_solve live (plan, overlapping task lanes, tool calls, answer), approves a write, downloads the report", async () => {
    const page = await browser.context.newPage();
    await signIn(page);
    const runId = await submit(page, "Compute 17*23 and (120/8)+2^5, then write a short report");

    // The plan, two task lanes of the first step that overlap in time, the tool calls.
    await expect.poll(() => page.locator(".plan li.step").count(), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
    const firstStep = page.getByRole("list", { name: "Step 1 tasks" }).getByRole("listitem");
    await expect
      .poll(() => firstStep.evaluateAll((lanes) => lanes.filter((l) => (l as any).dataset.end).length), { timeout: 60_000 })
      .toBe(2);
    const lanes = await firstStep.evaluateAll((items) =>
      items.map((l) => ({ start: Date.parse((l as any).dataset.start!), end: Date.parse((l as any).dataset.end!) })),
    );
    expect(lanes[0]!.start < lanes[1]!.end && lanes[1]!.start < lanes[0]!.end).toBe(true);
    await expect.poll(() => page.locator(".entry.tool-called strong", { hasText: /^→ calculator$/ }).count()).toBe(2);
    await expect.poll(() => page.locator(".entry.tool-result", { hasText: "391" }).count()).toBe(1);

    // The write waits for a person: approve it from the page.
    const card = page.getByRole("article", { name: "Allow write_artifact?" });
    await card.waitFor({ timeout: 60_000 });
    // Each argument readable: the file name as text, the Markdown as code, its lines kept.
    await expect.poll(() => card.locator(".argument", { hasText: "filename" }).locator(".text-arg").textContent()).toBe("report.md");
    expect(await card.locator("pre.code-arg code.language-markdown").textContent()).toContain("17*23 = 391\n");
    await card.getByRole("button", { name: "Approve" }).click();

    // The answer, the usage, the file.
    await page.getByRole("heading", { name: "Answer" }).waitFor({ timeout: 60_000 });
    await expect.poll(() => page.locator(".answer").textContent()).toContain("391");
    // Markdown shows arithmetic as written: no * taken for emphasis.
    expect(await page.locator(".answer").textContent()).toContain("17*23 = 391");
    expect(await page.locator(".answer em").count()).toBe(0);
    await expect.poll(() => page.locator(".connection").textContent()).toBe("ended");
    // Counted by the notifier once the execution has ended, a moment after the run; the page reads it again until then.
    await expect.poll(() => page.locator(".usage").textContent(), { timeout: 30_000 }).toMatch(/State transitions\d+/);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download report.md" }).click()]);
    const saved = await download.path();
    const report = await readFile(saved, "utf8");
    expect(report).toContain("17*23 = 391");
    expect(report).toContain("(120/8)+2^5 = 47");
    await page.getByRole("button", { name: "Preview report.md" }).click();
    await expect.poll(() => page.locator(".preview h1").textContent()).toBe("Report");
    expect(await page.locator(".preview").textContent()).toContain("17*23 = 391");

    // Every event once, in order, exactly as the API has them.
    const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
    expect(await shownEvents(page)).toEqual(events.map((e: any) => ({ seq: e.seq, type: e.type })));
    // Text streamed as deltas is shown once (the thought after it is the same text).
    expect(await page.locator(".entry .text", { hasText: /^Done\. 17\*23 = 391$/ }).count()).toBe(1);
    expect(await page.locator(".entry.agent-thought").count()).toBe(0);

    // The preview scrolled itself into view; the screenshot shows the page from its top.
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
    await page.screenshot({ path: path.join(OUTPUT, "run-laptop.png") });
    await page.locator("section[aria-labelledby=timeline-h]").screenshot({ path: path.join(OUTPUT, "tasks-laptop.png") });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(OUTPUT, "run-phone.png") });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${proxy.url}/#/runs`);
    await page.locator(`tr[data-run-id="${runId}"]`).waitFor();
    await page.screenshot({ path: path.join(OUTPUT, "runs-laptop.png") });

    // The runs list: status, mode, age, estimated cost (none: the offline model has no price), session;
    // updated live; filtered by session and status.
    const cells = await page.locator(`tr[data-run-id="${runId}"] td`).allTextContents();
    expect(cells).toEqual([
      expect.stringContaining("Compute 17*23"),
      "succeeded",
      "plan_solve",
      expect.stringMatching(/ago$/),
      "—",
      expect.stringMatching(/^ses_/),
    ]);
    expect(await page.getByRole("columnheader").allTextContents()).toContain("Est. cost");
    const sessionId = `ses_browser_${Date.now()}`;
    const fresh = await api("/v1/runs", { input: "Hello from the API", mode: "react", sessionId });
    await page.locator(`tr[data-run-id="${fresh.runId}"]`).waitFor({ timeout: 30_000 }); // no reload
    await page.getByLabel("Session").fill(sessionId);
    await page.getByLabel("Session").press("Enter");
    const listed = () => page.locator("tbody tr[data-run-id]").evaluateAll((rows) => rows.map((r) => (r as any).dataset.runId));
    await expect.poll(listed).toEqual([fresh.runId]);
    await page.getByLabel("Status").selectOption("failed");
    await expect.poll(listed).toEqual([]);
    await page.close();
  });

  it("recovers from a dropped connection mid-run with the exact event sequence", async () => {
    const page = await browser.context.newPage();
    await signIn(page);
    const runId = await submit(page, "Compute 17*23 and (120/8)+2^5, then write a short report");
    const card = page.getByRole("article", { name: "Allow write_artifact?" });
    await card.waitFor({ timeout: 60_000 });
    const before = proxy.streamRequests();

    // The network drops while the run waits; the approval goes through once the page is back.
    proxy.dropAll();
    await expect.poll(() => proxy.streamRequests(), { timeout: 30_000 }).toBeGreaterThan(before);
    await card.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");

    const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
    expect(events.at(-1).type).toBe("run.succeeded");
    expect(await shownEvents(page)).toEqual(events.map((e: any) => ({ seq: e.seq, type: e.type })));
    await page.close();
  });

  it("edits a write's arguments from the page, and cancels a run", async () => {
    const page = await browser.context.newPage();
    await signIn(page);
    await submit(page, "Compute 17*23 and (120/8)+2^5, then write a short report");
    const card = page.getByRole("article", { name: "Allow write_artifact?" });
    await card.waitFor({ timeout: 60_000 });
    // Each argument is a field of its own, with its value as is.
    await card.getByRole("button", { name: "Edit" }).click();
    expect(await card.getByLabel("filename").inputValue()).toBe("report.md");
    await card.getByLabel("filename").fill("edited.md");
    await card.getByLabel("content").fill("# Edited\n\nChecked by a person.\n");
    await card.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download edited.md" }).click()]);
    expect(await readFile(await download.path(), "utf8")).toBe("# Edited\n\nChecked by a person.\n");
    expect(await page.getByRole("button", { name: "Download report.md" }).count()).toBe(0);

    // Cancel run: the run waiting for a person ends cancelled.
    const second = await submit(page, "Compute 2*3 and 4+5, then write a short report");
    await page.getByRole("article", { name: "Allow write_artifact?" }).waitFor({ timeout: 60_000 });
    await page.getByRole("button", { name: "Cancel run" }).click();
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
    expect((await api(`/v1/runs/${second}`)).status).toBe("cancelled");
    await expect.poll(() => page.locator(".meta .badge").textContent()).toBe("cancelled");
    await page.close();
  });

  it("a write a person rejected leaves its task not done and says so on its step, at 1280 and 390 px", async () => {
    const page = await browser.context.newPage();
    try {
      await signIn(page);
      const runId = await submit(page, "Compute 17*23 and (120/8)+2^5, then write a short report (rejected)");
      const card = page.getByRole("article", { name: "Allow write_artifact?" });
      await card.waitFor({ timeout: 60_000 });
      await card.getByLabel("Message").fill("no files today");
      await card.getByRole("button", { name: "Reject" }).click();
      await expect.poll(() => page.locator(".connection").textContent(), { timeout: 90_000 }).toBe("ended");
      const { tasks, plan } = await api(`/v1/runs/${runId}`);
      const writer = tasks.find((t: any) => t.undone);
      expect(writer.undone).toEqual([{ tool: "write_artifact", decision: "reject" }]);
      // The task: not done, and why, never "✓".
      const entry = page.locator(".entry.task-completed").filter({ has: page.locator(".who", { hasText: writer.taskId }) });
      expect(await entry.textContent()).toMatch(/⊘ not done: .* — the user rejected write_artifact$/);
      expect(await entry.textContent()).not.toContain("✓");
      expect(await page.locator(`.lane[data-task-id="${writer.taskId}"]`).getAttribute("data-status")).toBe("not_done");
      // Its step: completed as far as it could be, one task not done.
      const index = plan.steps.findIndex((s: any) => s.undone);
      expect(plan.steps[index]).toMatchObject({ status: "completed", undone: 1 });
      const step = page.locator(".plan li.step").nth(index);
      expect(await step.locator(".badge.undone").textContent()).toBe("1 not done");
      expect(await step.locator(".verdict").textContent()).toMatch(/^Done when met as far as it could be/);
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await pageWidth(page)).toBeLessThanOrEqual(390);
      await page.screenshot({ path: path.join(OUTPUT, "rejected-write-phone.png") });
    } finally {
      await page.close();
    }
  });

  it("shows code to approve as code (line breaks, Python highlighted) and edits it as code, checked against the tool's schema", async () => {
    const page = await browser.context.newPage();
    await signIn(page);
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
    await expect.poll(() => shown.locator(".hljs-keyword").count()).toBeGreaterThan(0);
    expect(await shown.textContent()).toBe(agentCode);
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText gives the lines as rendered, which textContent (above) does not
    expect((await shown.innerText()).split("\n").length).toBeGreaterThan(3);
    expect(await shown.evaluate((el) => (globalThis as any).getComputedStyle(el).fontFamily)).toMatch(/mono/i);
    expect(await card.textContent()).not.toContain("\\n");
    await card.screenshot({ path: path.join(OUTPUT, "approve-code-laptop.png") });
    // On a phone the arguments wrap inside the card: nothing cut off at its right edge.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await shown.evaluate((el) => (el.parentElement as any).scrollWidth <= (el.parentElement as any).clientWidth)).toBe(true);
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await card.screenshot({ path: path.join(OUTPUT, "approve-code-phone.png") });
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
    await expect.poll(() => filesField.getByRole("alert").textContent()).toBe("'files' must be array, not string.");
    expect(await card.getByRole("alert").count()).toBe(1);
    await files.fill("[sales.csv");
    await card.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect.poll(() => filesField.getByRole("alert").textContent()).toMatch(/^'files' is not valid JSON/);
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

  it("answers an agent's question, and rejects a plan with a message then approves the revised one, from the page", async () => {
    const page = await browser.context.newPage();
    await signIn(page);
    await openNewRun(page);
    await page.getByLabel("Task", { exact: true }).fill("Please ask me first, then count the words in this sentence");
    await page.getByLabel("Mode").selectOption("react");
    await page.getByRole("button", { name: "Submit" }).click();
    const asks = page.getByRole("article", { name: "The agent asks" });
    await asks.waitFor({ timeout: 60_000 });
    await asks.getByLabel("Answer").fill("Use British spelling");
    await asks.getByRole("button", { name: "Answer" }).click();
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
    await expect.poll(() => page.locator(".answer").textContent()).toContain("The user answered: Use British spelling");

    await openNewRun(page);
    await page.getByLabel("Task", { exact: true }).fill("Compute 17*23 and (120/8)+2^5, then write a short report");
    await page.getByLabel("Mode").selectOption("plan_solve");
    await page.getByLabel("Approve the plan before it runs").check();
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/#\/runs\/run_/);
    const runId = page.url().split("#/runs/")[1]!;
    const plan = page.getByRole("article", { name: "Approve the plan?" });
    await plan.waitFor({ timeout: 60_000 });
    const first = await plan.getAttribute("data-interrupt-id");
    await plan.getByLabel("Message").fill("Add more detail");
    await plan.getByRole("button", { name: "Reject" }).click();
    // The planner revises the plan and asks again: a new card.
    await expect
      .poll(async () => (await plan.count()) === 1 && (await plan.getAttribute("data-interrupt-id")) !== first, { timeout: 60_000 })
      .toBe(true);
    await plan.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
    const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
    expect(events.filter((e: any) => e.type === "interrupt.resolved").map((e: any) => [e.data.decision, e.data.message])).toEqual([
      ["reject", "Add more detail"],
      ["approve", undefined],
    ]);
    expect(events.at(-1).type).toBe("run.succeeded");
    await page.close();
  });

  it("attaches a file to a new run from the keyboard: uploaded, listed with the run, read by the agent", async () => {
    const sales = "region,month,amount\nnorth,jan,120.5\nsouth,jan,80\nnorth,feb,99.5\nsouth,feb,100\neast,feb,50\n";
    const page = await browser.context.newPage();
    await signIn(page);
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
    await page.screenshot({ path: path.join(OUTPUT, "new-run-laptop.png") });
    await page.keyboard.press("Tab");
    expect(await page.getByRole("button", { name: "Submit" }).evaluate((el) => el === (el as any).ownerDocument.activeElement)).toBe(true);
    await page.keyboard.press("Enter");
    await page.waitForURL(/#\/runs\/run_/);
    const runId = page.url().split("#/runs/")[1]!;

    // The agent ran Python over the attached file, and its figures are the answer.
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 120_000 }).toBe("ended");
    await expect
      .poll(() => page.locator(".entry.tool-called", { hasText: "→ run_code" }).locator(".args").textContent())
      .toContain('"sales.csv"');
    await expect.poll(() => page.locator(".answer").textContent()).toContain("sales.csv: 5 rows, 3 columns");
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
    const page = await browser.context.newPage();
    await signIn(page);
    await openNewRun(page);
    await page
      .getByLabel("Task", { exact: true })
      .fill("Analyse the attached spreadsheet and write an HTML report and slides with a chart of the totals");
    await page.getByLabel("Mode").selectOption("react");
    await page.getByLabel("Files to attach").setInputFiles({
      name: "sales.xlsx",
      mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      buffer: await salesWorkbook(),
    });
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/#\/runs\/run_/);
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 120_000 }).toBe("ended");
    // Each report drawn from its report.delta events: the findings' table is a table.
    const written = page.locator(".entry.report-delta", { hasText: "Writing data-analysis-report.pptx" });
    expect(await written.locator(".report table").count()).toBeGreaterThan(0);
    expect(await page.locator(".entry.report-delta").count()).toBeGreaterThanOrEqual(2);
    // The deck's preview: its slides, the chart among them.
    await page.getByRole("button", { name: "Preview data-analysis-report.pptx" }).click();
    await expect.poll(() => page.locator(".preview section").count()).toBeGreaterThan(2);
    expect(await page.locator(".preview h1").first().textContent()).toBe("Data analysis report");
    expect(await page.locator('.preview img[alt="amount by region"]').getAttribute("src")).toMatch(/^data:image\/png;base64,/);
    // Slides that look like slides: each a 16:9 card with its title, its number in the corner.
    const slide = page.locator(".preview section.slide").nth(1);
    const box = (await slide.boundingBox())!;
    expect(box.width / box.height).toBeCloseTo(16 / 9, 1);
    expect(await slide.evaluate((s) => (globalThis as any).getComputedStyle(s).borderTopStyle)).toBe("solid");
    expect(await slide.locator("small").evaluate((s) => (globalThis as any).getComputedStyle(s).position)).toBe("absolute");

    // The HTML report's preview with its chart fits the page at every width: the chart scales, the page never widens.
    const pageWidth = () => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
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
      expect(await pageWidth()).toBeLessThanOrEqual(width);
      await page.locator(".files-section").screenshot({ path: path.join(OUTPUT, `report-preview-${width}.png`) });
    }
    await page.close();
  });

  it("says when a filter matches no run, and fits a 390 px phone: runs as cards, the plan first, the preview in view, no sideways scroll", async () => {
    // Submitted before the list is open, so its first load shows the run (the first test waits for a live update).
    const { runId } = await api("/v1/runs", { input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve" });
    const page = await browser.context.newPage();
    // The header has one height, signed out and in (it grew by 4 px with the Sign out button).
    const headerHeight = async () => (await page.locator("header.top").boundingBox())!.height;
    await page.goto(proxy.url);
    await page.getByLabel("API key").waitFor();
    const signedOut = await headerHeight();
    await signIn(page);
    expect(await headerHeight()).toBe(signedOut);
    await page.locator(`tr[data-run-id="${runId}"]`).waitFor({ timeout: 30_000 });

    // A filter that matches nothing, while runs exist: said so, with the way back.
    await page.getByLabel("Status").selectOption("timed_out");
    await expect.poll(() => page.locator("tbody tr.empty").textContent()).toBe("No runs match this filter. Show all runs");
    await page.getByRole("button", { name: "Show all runs" }).click();
    await page.locator(`tr[data-run-id="${runId}"]`).waitFor();

    // The icon browsers ask for.
    const icon = await fetch(`${proxy.url}/favicon.ico`);
    expect([icon.status, icon.headers.get("content-type")]).toEqual([200, "image/svg+xml"]);
    expect(await icon.text()).toContain("<svg");

    await page.setViewportSize({ width: 390, height: 844 });
    const sideways = () => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
    const row = page.locator(`tr[data-run-id="${runId}"]`);
    // Polled: the list refreshes every few seconds, and a row replaced mid-read has no computed style.
    await expect.poll(() => row.evaluate((tr) => (globalThis as any).getComputedStyle(tr).display)).toBe("block");
    expect(
      await row.locator("td", { hasText: "plan_solve" }).evaluate((td) => (globalThis as any).getComputedStyle(td, "::before").content),
    ).toBe('"Mode"');
    expect((await row.boundingBox())!.width).toBeLessThanOrEqual(390);
    expect(await sideways()).toBeLessThanOrEqual(390);
    // The session id on one line, whole (it wrapped mid-token beside its name); polled, as the list refreshes.
    const idLines = () =>
      row.locator('td[data-label="Session"] code').evaluate((code: any) => {
        const range = (globalThis as any).document.createRange();
        range.selectNodeContents(code);
        return new Set([...range.getClientRects()].map((rect: any) => Math.round(rect.top))).size;
      });
    await expect.poll(idLines).toBe(1);
    await page.screenshot({ path: path.join(OUTPUT, "runs-phone.png"), fullPage: true });

    await page.goto(`${proxy.url}/#/runs/${runId}`);
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
    await page.screenshot({ path: path.join(OUTPUT, "run-phone-preview.png") });

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

  it("a run handled by one agent says so instead of waiting for parallel tasks", async () => {
    const page = await browser.context.newPage();
    await signIn(page);
    const { runId } = await api("/v1/runs", { input: "Hello from the API", mode: "react" });
    await page.goto(`${proxy.url}/#/runs/${runId}`);
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
    await expect.poll(() => page.locator(".timeline-section p").textContent()).toBe("No parallel tasks: one agent handles this run.");
    // The run page names where an MCP client follows this run: the MCP endpoint beside the stream.
    const mcp = page.getByRole("link", { name: "MCP" });
    expect(await mcp.getAttribute("href")).toBe(`${proxy.url}/mcp`);
    expect(await mcp.getAttribute("title")).toContain(`get_run {"runId": "${runId}"}`);
    expect(await page.getByRole("link", { name: "AG-UI stream" }).getAttribute("href")).toBe(
      `${proxy.url}/v1/runs/${runId}/stream?protocol=ag-ui`,
    );
    // … and the A2A agent's card, where this run is the task of the same id.
    const a2a = page.getByRole("link", { name: "A2A" });
    expect(await a2a.getAttribute("href")).toBe("/.well-known/agent-card.json");
    expect(await a2a.getAttribute("title")).toContain(`task ${runId} at ${proxy.url}/a2a`);
    await page.close();
  });

  it("saves the tenant's instructions and a saved agent on the Agents page, and runs as that agent from New run", async () => {
    const page = await browser.context.newPage();
    await signIn(page);
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
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
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
    await fetch(`${stack.url}/v1/settings`, {
      method: "PUT",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ instructions: "" }),
    });
    await page.close();
  });

  it("updates Usage as model calls happen, not only when the run ends", async () => {
    // The executors' model calls wait until the page has shown the planner's: it is counted while
    // the run is mid-way, with no task finished, however slow the machine.
    let release = () => {};
    holdExecutors = new Promise((resolve) => (release = resolve));
    const page = await browser.context.newPage();
    try {
      await signIn(page);
      const { runId } = await api("/v1/runs", { input: "Compute 17*23 and (120/8)+2^5", mode: "plan_solve" });
      await page.goto(`${proxy.url}/#/runs/${runId}`);
      await expect.poll(() => page.locator(".usage").textContent(), { timeout: 60_000 }).toMatch(/Model calls[1-9]/);
      // Counted before any task had finished, and before the run ended.
      const shown = await shownEvents(page);
      expect(shown.map((e) => e.type)).toContain("plan.updated");
      expect(shown.map((e) => e.type)).not.toContain("task.completed");
      expect(await page.locator(".connection").textContent()).not.toBe("ended");
      release();
      await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
      // Every call of the run by its end (planner, executors, summarizer: at least 3; 10 or more with revisions).
      const { usage } = await api(`/v1/runs/${runId}`);
      expect(usage.llmCalls).toBeGreaterThanOrEqual(3);
      const modelCalls = async () => Number(/Model calls(\d+)/.exec((await page.locator(".usage").textContent()) ?? "")?.[1] ?? 0);
      await expect.poll(modelCalls).toBe(usage.llmCalls);
    } finally {
      release();
      holdExecutors = undefined;
      await page.close();
    }
  });

  it("says so when the API key is wrong, and never puts the key in a URL", async () => {
    const page = await browser.context.newPage();
    const urls: string[] = [];
    page.on("request", (request) => urls.push(request.url()));
    await page.goto(proxy.url);
    await page.getByLabel("API key").fill("sk_wrong_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("not valid");
    await page.screenshot({ path: path.join(OUTPUT, "signin-wrong-key.png") });
    await signIn(page);
    expect(urls.filter((u) => u.includes("sk_wrong_key") || u.includes(stack.apiKey))).toEqual([]);
    await page.close();
  });
  /** Whether a model request belongs to the run whose task carries `marker`. */
  const asksAbout = (request: ProxiedRequest, marker: string) => JSON.stringify(request.body.messages).includes(marker);
  const pageWidth = (page: Page) => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);

  it.each([
    [1280, 800],
    [390, 844],
  ])(
    "a model that cannot be reached says so on the run at %i px: each retry as it happens, and what the run waits for",
    async (width, height) => {
      const marker = `model down ${width}`;
      let pageOpen!: () => void;
      const opened = new Promise<void>((resolve) => (pageOpen = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let failures = 0;
      let firstFailure = 0;
      // The run's first two calls cannot reach the model (once the page shows the run); the third waits until released.
      modelFault = async (request) => {
        if (!asksAbout(request, marker)) return undefined;
        await opened;
        if (failures++ < 2) {
          firstFailure ||= Date.now();
          return "refuse";
        }
        await released;
        return undefined;
      };
      const page = await browser.context.newPage();
      try {
        await page.setViewportSize({ width, height });
        await signIn(page);
        const { runId } = await api("/v1/runs", { input: `What is 17*23? (${marker})`, mode: "react" });
        await page.goto(`${proxy.url}/#/runs/${runId}`);
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
        expect(await pageWidth(page)).toBeLessThanOrEqual(width);
        await page.screenshot({ path: path.join(OUTPUT, `model-retry-${width}.png`) });
        // Within seconds of the first failure, not at the end of the retries (wide margin for a busy machine).
        expect(shownAfterMs).toBeLessThan(5_000);
        const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
        const first = events.find((e: any) => e.type === "model.retrying");
        expect(Date.parse(first.at) - firstFailure).toBeLessThan(5_000);
        expect(first.data).toMatchObject({ agent: "react", attempt: 1, retries: 2 });

        release();
        await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
        await expect.poll(() => page.locator(".meta .badge").textContent()).toBe("succeeded");
        expect(await page.locator(".meta .status-detail").count()).toBe(0);
      } finally {
        release();
        modelFault = undefined;
        await page.close();
      }
    },
  );

  it.each([
    [1280, 800],
    [390, 844],
  ])("a streamed reply cut off and retried is withdrawn from the page at %i px, and marked in the event log", async (width, height) => {
    const marker = `cut summary ${width}`;
    let cut = false;
    // The run's first summary breaks off half-way, after its first words reached the page.
    modelFault = (request) => {
      if (request.role !== "summarizer" || !asksAbout(request, marker) || cut) return undefined;
      cut = true;
      return "cut-late";
    };
    const page = await browser.context.newPage();
    try {
      await page.setViewportSize({ width, height });
      await signIn(page);
      const { runId } = await api("/v1/runs", { input: `Compute 17*23 and (120/8)+2^5 (${marker})`, mode: "plan_solve" });
      await page.goto(`${proxy.url}/#/runs/${runId}`);
      await expect.poll(() => page.locator(".connection").textContent(), { timeout: 90_000 }).toBe("ended");

      const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
      const run = await api(`/v1/runs/${runId}`);
      expect(run.status).toBe("succeeded");
      const withdrawnAt = events.findIndex((e: any) => e.type === "agent.withdrawn");
      expect(events[withdrawnAt]?.data.agent).toBe("summarizer");
      const summary = (list: any[]) => list.filter((e) => e.type === "agent.delta" && e.data.agent === "summarizer");
      const partial = summary(events.slice(0, withdrawnAt));
      expect(partial.length).toBeGreaterThan(0);
      expect(
        summary(events.slice(withdrawnAt))
          .map((e: any) => e.data.text)
          .join(""),
      ).toBe(run.result);

      // On the page: the summary's text once, the whole of it; the broken part struck through in the event log.
      const texts = page.locator(".entry.agent-delta").filter({ has: page.locator(".who", { hasText: /^summarizer$/ }) });
      expect(await texts.count()).toBe(1);
      expect((await texts.locator(".text").textContent())?.replace(/\s+/g, " ").trim()).toContain("391");
      expect(
        await page.locator("#event-log li.withdrawn").evaluateAll((items) => items.map((li) => Number((li as any).dataset.seq))),
      ).toEqual(partial.map((e: any) => e.seq));
      expect(await page.locator('#event-log li[data-type="agent.withdrawn"]').textContent()).toContain("of summarizer withdrawn");
      expect(await pageWidth(page)).toBeLessThanOrEqual(width);
    } finally {
      modelFault = undefined;
      await page.close();
    }
  });
  it.each([
    [1280, 800],
    [390, 844],
  ])("shows the whole of a long task on the run page at %i px, on demand", async (width, height) => {
    const task = `Compute 17*23 and then explain, in plain words for a reader who is new to arithmetic, how you got there (${width} px), step by step, with each intermediate product named`;
    const { runId } = await api("/v1/runs", { input: task, mode: "react" });
    const page = await browser.context.newPage();
    try {
      await page.setViewportSize({ width, height });
      await signIn(page);
      await page.goto(`${proxy.url}/#/runs/${runId}`);
      await expect.poll(() => page.locator("h1").textContent()).toBe(`${task.slice(0, 79)}…`);
      const whole = page.locator("details.whole-task");
      expect(await whole.locator(".task-text").isVisible()).toBe(false);
      await whole.getByText("Show the whole task").click();
      expect(await whole.locator(".task-text").textContent()).toBe(task);
      expect(await whole.locator(".task-text").isVisible()).toBe(true);
      expect(await pageWidth(page)).toBeLessThanOrEqual(width);
    } finally {
      await page.close();
    }
  });

  it.each([
    [1280, 800],
    [390, 844],
  ])("lists sessions by the title their first turn got, and the runs list shows it for that run, at %i px", async (width, height) => {
    const sessionId = `ses_titled_${width}`;
    const task = `Summarise the quarterly figures for ${width} px readers. Then list the risks.`;
    const { runId } = await api("/v1/runs", { input: task, mode: "react", sessionId });
    // The offline model's title: the request's first sentence, at most six words.
    const title = `Summarise the quarterly figures for ${width}`;
    await expect.poll(async () => (await api(`/v1/sessions/${sessionId}`)).title, { timeout: 60_000 }).toBe(title);
    const page = await browser.context.newPage();
    try {
      await page.setViewportSize({ width, height });
      await signIn(page);
      await page.getByRole("link", { name: "Sessions", exact: true }).click();
      await page.getByRole("heading", { name: "Sessions" }).waitFor();
      const row = page.locator(`tr[data-session-id="${sessionId}"]`);
      await row.waitFor({ timeout: 30_000 });
      expect(await row.locator("td.task").textContent()).toBe(title);
      expect(await row.getByRole("link", { name: runId }).count()).toBe(1);
      expect(await pageWidth(page)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: path.join(OUTPUT, `sessions-${width === 390 ? "phone" : "laptop"}.png`) });

      // The session's title leads to its runs; the run that was titled shows the title, its task on hover.
      await row.getByRole("link", { name: title }).click();
      const runRow = page.locator(`tr[data-run-id="${runId}"]`);
      await runRow.waitFor({ timeout: 30_000 });
      expect(await runRow.locator("td.task").textContent()).toBe(title);
      expect(await runRow.locator("td.task a").getAttribute("title")).toBe(task);
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
      const page = await browser.context.newPage();
      try {
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
        const { runId } = await api("/v1/runs", { input: "What is 2+2? (webhook section)", mode: "react", webhook: { url } });
        await signIn(page);
        await page.goto(`${proxy.url}/#/runs/${runId}`);
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

  describe("fork from here, and a failed tool call's card", () => {
    const runsOf = async (sessionId: string) => (await api(`/v1/runs?sessionId=${sessionId}&limit=100`)).runs.length as number;

    it.each([
      [1280, 800],
      [390, 844],
    ])(
      "forks an ended run at a tool result with an edited result at %i px; an edit the API refuses says why and starts nothing",
      async (width, height) => {
        const { runId } = await api("/v1/runs", { input: `Compute 17*23 and (120/8)+2^5 (fork ${width})`, mode: "plan_solve" });
        const page = await browser.context.newPage();
        try {
          await page.setViewportSize({ width, height });
          await signIn(page);
          await page.goto(`${proxy.url}/#/runs/${runId}`);
          await expect.poll(() => page.locator(".connection").textContent(), { timeout: 90_000 }).toBe("ended");
          const parent = await api(`/v1/runs/${runId}`);
          expect(parent.status).toBe("succeeded");
          expect(parent.result).toContain("391");

          // Offered on each plan step and task too; the plan's editor holds the plan as the planner made it.
          await expect.poll(() => page.locator(".plan .fork-from-here").count(), WIDE).toBe(parent.plan.steps.length);
          const taskForks = page.getByRole("list", { name: "Step 1 tasks" }).getByRole("button", { name: /^Fork from here: task / });
          await expect.poll(() => taskForks.count(), WIDE).toBe(2);
          await page.screenshot({ path: path.join(OUTPUT, `fork-offered-${width}.png`), fullPage: true });
          await page.getByRole("button", { name: /^Fork from here: plan step 1 / }).click();
          const dialog = page.getByRole("dialog", { name: "Fork from here" });
          const plan = dialog.getByLabel("Plan");
          await expect.poll(() => plan.inputValue(), WIDE).toContain(`${parent.plan.steps[0].title}\n- ${parent.plan.steps[0].tasks[0]}`);
          // A plan with no step is refused here, before anything is sent.
          await plan.fill("");
          await dialog.getByRole("button", { name: "Start the fork" }).click();
          await expect.poll(() => dialog.getByRole("alert").textContent(), WIDE).toContain("The plan has no step");
          expect(await plan.getAttribute("aria-invalid")).toBe("true");
          await dialog.getByRole("button", { name: "Cancel" }).click();
          await expect.poll(() => dialog.count(), WIDE).toBe(0);

          // From the keyboard: the tool result's button opens the dialog, the result's text in its editor, focused.
          const result = page.locator(".entry.tool-result", { hasText: "391" });
          const fork = result.getByRole("button", { name: "Fork from here: the result of calculator", exact: false });
          await fork.focus();
          await page.keyboard.press("Enter");
          const edit = dialog.getByLabel("Tool result");
          await expect.poll(() => edit.evaluate((el) => el === (globalThis as any).document.activeElement), WIDE).toBe(true);
          expect(await edit.inputValue()).toContain("391");
          await page.keyboard.press("Escape");
          await expect.poll(() => dialog.count(), WIDE).toBe(0);
          expect(await fork.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
          await page.keyboard.press("Enter");
          await expect.poll(() => edit.inputValue(), WIDE).toContain("391");
          expect(await pageWidth(page)).toBeLessThanOrEqual(width);
          const box = (await dialog.boundingBox())!;
          expect(box.x >= 0 && box.x + box.width <= width).toBe(true);

          // An edit that does not fit the API's schema: its message beside the edit, and no run started.
          const before = await runsOf(parent.sessionId);
          await edit.fill("9".repeat(200_001));
          await dialog.getByRole("button", { name: "Start the fork" }).click();
          await expect.poll(() => dialog.getByRole("alert").textContent(), WIDE).toContain("edits.toolResults.0.output");
          expect(await edit.getAttribute("aria-invalid")).toBe("true");
          expect(page.url()).toContain(runId);
          expect(await runsOf(parent.sessionId)).toBe(before);
          await page.screenshot({ path: path.join(OUTPUT, `fork-dialog-${width}.png`) });

          // The edit: the fork's page opens, says what it forked from, and its answer reads the edited result.
          await edit.fill("17*23 = 999");
          await dialog.getByRole("button", { name: "Start the fork" }).click();
          await page.waitForURL((url) => /#\/runs\/run_/.test(url.hash) && !url.hash.includes(runId), WIDE);
          const forkId = page.url().split("#/runs/")[1]!;
          await expect
            .poll(() => page.locator(".fork-of").textContent(), WIDE)
            .toMatch(new RegExp(`^Forked from ${runId} at task#\\d+#\\S+ round \\d+$`));
          await expect.poll(() => page.locator(".connection").textContent(), { timeout: 90_000 }).toBe("ended");
          await expect.poll(() => page.locator(".answer").textContent(), WIDE).toContain("999");
          const forked = await api(`/v1/runs/${forkId}`);
          expect(forked).toMatchObject({ status: "succeeded", forkOf: { runId }, sessionId: parent.sessionId });
          expect(forked.result).toContain("999");
          expect(await runsOf(parent.sessionId)).toBe(before + 1);
          expect((await api(`/v1/runs/${runId}`)).result).toBe(parent.result);
          expect(await pageWidth(page)).toBeLessThanOrEqual(width);
        } finally {
          await page.close();
        }
      },
    );

    /** A billing tool source whose key can expire: while `expired`, every call is refused 401 (a failure a person can fix). */
    const invoices = { expired: false, sent: [] as string[] };
    let billing: McpHttpServer | undefined;
    afterAll(async () => {
      if (billing)
        await fetch(`${stack.url}/v1/tool-sources/billing`, { method: "DELETE", headers: { authorization: `Bearer ${stack.apiKey}` } });
      await billing?.close();
    });

    it.each([
      [1280, 800],
      [390, 844],
    ])(
      "a tool that fails for a fixable reason pauses on a card with the call and the error; Retry runs it again and the run succeeds, at %i px",
      async (width, height) => {
        if (!billing) {
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
          expect((await api("/v1/tool-sources", { name: "billing", url: billing.url })).name).toBe("billing");
          // Each function keeps a tenant's tool list at most TOOL_CATALOG_CACHE_MS (5 s here): past it, every run lists the new tool.
          await new Promise((resolve) => setTimeout(resolve, 5_500));
        }
        const to = `acme-${width}`;
        invoices.expired = true;
        const { runId } = await api("/v1/runs", { input: `use billing__send_invoice {"to": "${to}"}`, mode: "react" });
        const page = await browser.context.newPage();
        try {
          await page.setViewportSize({ width, height });
          await signIn(page);
          await page.goto(`${proxy.url}/#/runs/${runId}`);
          const card = page.getByRole("article", { name: "billing__send_invoice failed" });
          await card.waitFor({ timeout: 60_000 });
          expect(await card.locator(".argument", { hasText: "to" }).locator(".text-arg").textContent()).toBe(to);
          expect(await card.locator(".tool-failure").textContent()).toContain("401");
          expect(await card.getByRole("button").allTextContents()).toEqual(["Retry", "Skip", "Edit", "Fail"]);
          expect(invoices.sent).not.toContain(to);
          expect(await pageWidth(page)).toBeLessThanOrEqual(width);
          await page.screenshot({ path: path.join(OUTPUT, `tool-failure-${width}.png`) });

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
      },
    );
  });
  describe("the budget card", () => {
    it("a run that stops at its token budget shows the budget card and what it spent; Extend lets it finish", async () => {
      // One token: the first model call's reservation would pass it, so the run pauses before any call.
      const { runId } = await api("/v1/runs", { input: "What is 2+2? (budget card)", mode: "react", budget: { tokens: 1 } });
      const page = await browser.context.newPage();
      try {
        await signIn(page);
        await page.goto(`${proxy.url}/#/runs/${runId}`);
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
