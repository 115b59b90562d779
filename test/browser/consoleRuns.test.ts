import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asksAbout, LAPTOP, PHONE, pageWidth, SCREENSHOTS, useConsoleStack, WIDE } from "../support/consoleHarness.js";

// The console in Chromium, part one: runs submitted, followed and decided from the page (approve,
// edit, reject, cancel, answer, a dropped connection, a reply withdrawn, a fork). consoleViews.test.ts
// has the rest; each file starts its own stack and browser, and the two run side by side.

const REPORT_TASK = "Compute 17*23 and (120/8)+2^5, then write a short report";
/** The body the New run form sends (its approvals: none unless chosen); the first case submits one from the form itself. */
const formRun = (input: string, mode: string, approval: { plan?: boolean; tools?: string } = {}) => ({
  input,
  mode,
  approval: { plan: approval.plan ?? false, tools: approval.tools ?? "none" },
});
/** A plan_solve run whose writes wait for a person. */
const writesWait = (input: string) => formRun(input, "plan_solve", { tools: "write" });
/** The run whose executors are held until its page has shown the planner's call (its own numbers pick its calls). */
const HELD = "19*29";
/** The run whose first summary breaks off half-way. */
const CUT = "cut summary";

describe("the web console in Chromium: runs and decisions", () => {
  const app = useConsoleStack();
  const { api, signIn, openPage, submit, shownEvents } = app;

  // Every later case's run starts here, all at once, while the first case runs: each case then finds
  // its run where it checks it (waiting for a person, or ended) instead of waiting for it in turn.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let cut = false;
  let runs: Record<"drop" | "edit" | "cancel" | "rejected" | "asks" | "plan" | "oneAgent" | "cut" | "fork", Promise<string>>;
  beforeAll(() => {
    // The executors of the usage case's run wait until its page has shown the planner's call.
    app.modelRules.add(async (request) => {
      if (request.role === "executor" && asksAbout(request, HELD)) await held;
      return undefined;
    });
    // The cut case's run: its first summary breaks off half-way, after its first words reached the stream.
    app.modelRules.add((request) => {
      if (request.role !== "summarizer" || !asksAbout(request, CUT) || cut) return undefined;
      cut = true;
      return "cut-late";
    });
    const start = (body: Record<string, unknown>) => {
      const started = app.startRun(body);
      started.catch(() => undefined); // the case that awaits it fails with why
      return started;
    };
    runs = {
      drop: start(writesWait(REPORT_TASK)),
      edit: start(writesWait(REPORT_TASK)),
      cancel: start(writesWait("Compute 2*3 and 4+5, then write a short report")),
      rejected: start(writesWait(`${REPORT_TASK} (rejected)`)),
      asks: start(formRun("Please ask me first, then count the words in this sentence", "react")),
      plan: start(formRun(REPORT_TASK, "plan_solve", { plan: true })),
      oneAgent: start({ input: "Hello from the API", mode: "react" }),
      cut: start({ input: `Compute 17*23 and (120/8)+2^5 (${CUT})`, mode: "plan_solve" }),
      fork: start({ input: "Compute 17*23 and (120/8)+2^5 (fork)", mode: "plan_solve" }),
    };
  });
  afterAll(() => release());

  it("signs in, runs plan_solve live (plan, overlapping task lanes, tool calls, answer), approves a write, downloads the report", async () => {
    const page = await app.browser.context.newPage();
    await signIn(page);
    const runId = await submit(page, REPORT_TASK);

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
    await expect.poll(() => page.locator(".entry.tool-called strong", { hasText: /^→ calculator$/ }).count(), WIDE).toBe(2);
    await expect.poll(() => page.locator(".entry.tool-result", { hasText: "391" }).count(), WIDE).toBe(1);

    // The write waits for a person: approve it from the page.
    const card = page.getByRole("article", { name: "Allow write_artifact?" });
    await card.waitFor({ timeout: 60_000 });
    // Each argument readable: the file name as text, the Markdown as code, its lines kept.
    await expect.poll(() => card.locator(".argument", { hasText: "filename" }).locator(".text-arg").textContent(), WIDE).toBe("report.md");
    expect(await card.locator("pre.code-arg code.language-markdown").textContent()).toContain("17*23 = 391\n");
    await card.getByRole("button", { name: "Approve" }).click();

    // The answer, the usage, the file.
    await page.getByRole("heading", { name: "Answer" }).waitFor({ timeout: 60_000 });
    await expect.poll(() => page.locator(".answer").textContent(), WIDE).toContain("391");
    // Markdown shows arithmetic as written: no * taken for emphasis.
    expect(await page.locator(".answer").textContent()).toContain("17*23 = 391");
    expect(await page.locator(".answer em").count()).toBe(0);
    await expect.poll(() => page.locator(".connection").textContent(), WIDE).toBe("ended");
    // Counted by the notifier once the execution has ended, a moment after the run; the page reads it again until then.
    await expect.poll(() => page.locator(".usage").textContent(), { timeout: 30_000 }).toMatch(/State transitions\d+/);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download report.md" }).click()]);
    const saved = await download.path();
    const report = await readFile(saved, "utf8");
    expect(report).toContain("17*23 = 391");
    expect(report).toContain("(120/8)+2^5 = 47");
    await page.getByRole("button", { name: "Preview report.md" }).click();
    await expect.poll(() => page.locator(".preview h1").textContent(), WIDE).toBe("Report");
    expect(await page.locator(".preview").textContent()).toContain("17*23 = 391");

    // Every event once, in order, exactly as the API has them.
    const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
    expect(await shownEvents(page)).toEqual(events.map((e: any) => ({ seq: e.seq, type: e.type })));
    // Text streamed as deltas is shown once (the thought after it is the same text).
    expect(await page.locator(".entry .text", { hasText: /^Done\. 17\*23 = 391$/ }).count()).toBe(1);
    expect(await page.locator(".entry.agent-thought").count()).toBe(0);

    // The preview scrolled itself into view; the screenshot shows the page from its top.
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
    await page.screenshot({ path: path.join(SCREENSHOTS, "run-laptop.png") });
    await page.locator("section[aria-labelledby=timeline-h]").screenshot({ path: path.join(SCREENSHOTS, "tasks-laptop.png") });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SCREENSHOTS, "run-phone.png") });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${app.proxy.url}/#/runs`);
    await page.locator(`tr[data-run-id="${runId}"]`).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, "runs-laptop.png") });

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
    await expect.poll(listed, WIDE).toEqual([fresh.runId]);
    await page.getByLabel("Status").selectOption("failed");
    await expect.poll(listed, WIDE).toEqual([]);
    await page.close();
  });

  it("recovers from a dropped connection mid-run with the exact event sequence", async () => {
    const runId = await runs.drop;
    const page = await openPage(`#/runs/${runId}`);
    const card = page.getByRole("article", { name: "Allow write_artifact?" });
    await card.waitFor({ timeout: 60_000 });
    // The page follows the run's stream before the network drops.
    await expect.poll(() => page.locator(".connection").textContent(), WIDE).toBe("live");
    const before = app.proxy.streamRequests();

    // The network drops while the run waits; the approval goes through once the page is back.
    app.proxy.dropAll();
    await expect.poll(() => app.proxy.streamRequests(), { timeout: 30_000 }).toBeGreaterThan(before);
    await card.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");

    const { events } = await api(`/v1/runs/${runId}/events?limit=500`);
    expect(events.at(-1).type).toBe("run.succeeded");
    expect(await shownEvents(page)).toEqual(events.map((e: any) => ({ seq: e.seq, type: e.type })));
    await page.close();
  });

  it("edits a write's arguments from the page, and cancels a run", async () => {
    const page = await openPage(`#/runs/${await runs.edit}`);
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
    const second = await runs.cancel;
    await page.goto(`${app.proxy.url}/#/runs/${second}`);
    await page.getByRole("article", { name: "Allow write_artifact?" }).waitFor({ timeout: 60_000 });
    await page.getByRole("button", { name: "Cancel run" }).click();
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
    expect((await api(`/v1/runs/${second}`)).status).toBe("cancelled");
    await expect.poll(() => page.locator(".meta .badge").textContent(), WIDE).toBe("cancelled");
    await page.close();
  });

  it("a write a person rejected leaves its task not done and says so on its step, at 1280 and 390 px", async () => {
    const runId = await runs.rejected;
    const page = await openPage(`#/runs/${runId}`);
    try {
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
      await page.screenshot({ path: path.join(SCREENSHOTS, "rejected-write-phone.png") });
    } finally {
      await page.close();
    }
  });

  it("answers an agent's question, and rejects a plan with a message then approves the revised one, from the page", async () => {
    const page = await openPage(`#/runs/${await runs.asks}`);
    const asks = page.getByRole("article", { name: "The agent asks" });
    await asks.waitFor({ timeout: 60_000 });
    await asks.getByLabel("Answer").fill("Use British spelling");
    await asks.getByRole("button", { name: "Answer" }).click();
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
    await expect.poll(() => page.locator(".answer").textContent(), WIDE).toContain("The user answered: Use British spelling");

    const runId = await runs.plan;
    await page.goto(`${app.proxy.url}/#/runs/${runId}`);
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

  it("a run handled by one agent says so instead of waiting for parallel tasks", async () => {
    const runId = await runs.oneAgent;
    const page = await openPage(`#/runs/${runId}`);
    await expect.poll(() => page.locator(".connection").textContent(), { timeout: 60_000 }).toBe("ended");
    await expect.poll(() => page.locator(".timeline-section p").textContent(), WIDE).toBe("No parallel tasks: one agent handles this run.");
    // The run page names where an MCP client follows this run: the MCP endpoint beside the stream.
    const mcp = page.getByRole("link", { name: "MCP" });
    expect(await mcp.getAttribute("href")).toBe(`${app.proxy.url}/mcp`);
    expect(await mcp.getAttribute("title")).toContain(`get_run {"runId": "${runId}"}`);
    expect(await page.getByRole("link", { name: "AG-UI stream" }).getAttribute("href")).toBe(
      `${app.proxy.url}/v1/runs/${runId}/stream?protocol=ag-ui`,
    );
    // … and the A2A agent's card, where this run is the task of the same id.
    const a2a = page.getByRole("link", { name: "A2A" });
    expect(await a2a.getAttribute("href")).toBe("/.well-known/agent-card.json");
    expect(await a2a.getAttribute("title")).toContain(`task ${runId} at ${app.proxy.url}/a2a`);
    await page.close();
  });

  it("updates Usage as model calls happen, not only when the run ends", async () => {
    // The run's executors wait (beforeAll) until the page has shown the planner's model call: it is
    // counted while the run is mid-way, with no task finished, however slow the machine. Started
    // here, not with the others: the page, open from the start, sees the count go up.
    const page = await openPage();
    try {
      const runId = await app.startRun({ input: `Compute ${HELD} and (120/8)+2^5`, mode: "plan_solve" });
      await page.goto(`${app.proxy.url}/#/runs/${runId}`);
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
      await expect.poll(modelCalls, WIDE).toBe(usage.llmCalls);
    } finally {
      release();
      await page.close();
    }
  });

  it("says so when the API key is wrong, and never puts the key in a URL", async () => {
    const page = await app.browser.context.newPage();
    const urls: string[] = [];
    page.on("request", (request) => urls.push(request.url()));
    await page.goto(app.proxy.url);
    await page.getByLabel("API key").fill("sk_wrong_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent(), WIDE).toContain("not valid");
    await page.screenshot({ path: path.join(SCREENSHOTS, "signin-wrong-key.png") });
    await signIn(page);
    expect(urls.filter((u) => u.includes("sk_wrong_key") || u.includes(app.stack.apiKey))).toEqual([]);
    await page.close();
  });

  it("a streamed reply cut off and retried is withdrawn from the page at 1280 and 390 px, and marked in the event log", async () => {
    // The run's first summary broke off half-way (beforeAll), after its first words reached the stream.
    const runId = await runs.cut;
    const page = await openPage(`#/runs/${runId}`);
    try {
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

      // On the page, at each width: the summary's text once, the whole of it; the broken part struck through in the event log.
      for (const { width, height } of [LAPTOP, PHONE]) {
        await page.setViewportSize({ width, height });
        const texts = page.locator(".entry.agent-delta").filter({ has: page.locator(".who", { hasText: /^summarizer$/ }) });
        expect(await texts.count()).toBe(1);
        expect((await texts.locator(".text").textContent())?.replace(/\s+/g, " ").trim()).toContain("391");
        expect(
          await page.locator("#event-log li.withdrawn").evaluateAll((items) => items.map((li) => Number((li as any).dataset.seq))),
        ).toEqual(partial.map((e: any) => e.seq));
        expect(await page.locator('#event-log li[data-type="agent.withdrawn"]').textContent()).toContain("of summarizer withdrawn");
        expect(await pageWidth(page)).toBeLessThanOrEqual(width);
      }
    } finally {
      await page.close();
    }
  });

  describe("fork from here", () => {
    const runsOf = async (sessionId: string) => (await api(`/v1/runs?sessionId=${sessionId}&limit=100`)).runs.length as number;

    it("forks an ended run at a tool result with an edited result at 1280 and 390 px; an edit the API refuses says why and starts nothing", async () => {
      const runId = await runs.fork;
      const page = await openPage(`#/runs/${runId}`);
      try {
        await expect.poll(() => page.locator(".connection").textContent(), { timeout: 90_000 }).toBe("ended");
        const parent = await api(`/v1/runs/${runId}`);
        expect(parent.status).toBe("succeeded");
        expect(parent.result).toContain("391");
        const dialog = page.getByRole("dialog", { name: "Fork from here" });
        const plan = dialog.getByLabel("Plan");
        const result = page.locator(".entry.tool-result", { hasText: "391" });
        const fork = result.getByRole("button", { name: "Fork from here: the result of calculator", exact: false });
        const edit = dialog.getByLabel("Tool result");

        // The same ended run at each width: every way to a fork, and an edit refused, before one fork is started.
        for (const { width, height } of [LAPTOP, PHONE]) {
          await page.setViewportSize({ width, height });
          // Offered on each plan step and task too; the plan's editor holds the plan as the planner made it.
          await expect.poll(() => page.locator(".plan .fork-from-here").count(), WIDE).toBe(parent.plan.steps.length);
          const taskForks = page.getByRole("list", { name: "Step 1 tasks" }).getByRole("button", { name: /^Fork from here: task / });
          await expect.poll(() => taskForks.count(), WIDE).toBe(2);
          await page.screenshot({ path: path.join(SCREENSHOTS, `fork-offered-${width}.png`), fullPage: true });
          await page.getByRole("button", { name: /^Fork from here: plan step 1 / }).click();
          await expect.poll(() => plan.inputValue(), WIDE).toContain(`${parent.plan.steps[0].title}\n- ${parent.plan.steps[0].tasks[0]}`);
          // A plan with no step is refused here, before anything is sent.
          await plan.fill("");
          await dialog.getByRole("button", { name: "Start the fork" }).click();
          await expect.poll(() => dialog.getByRole("alert").textContent(), WIDE).toContain("The plan has no step");
          expect(await plan.getAttribute("aria-invalid")).toBe("true");
          await dialog.getByRole("button", { name: "Cancel" }).click();
          await expect.poll(() => dialog.count(), WIDE).toBe(0);

          // From the keyboard: the tool result's button opens the dialog, the result's text in its editor, focused.
          await fork.focus();
          await page.keyboard.press("Enter");
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
          await page.screenshot({ path: path.join(SCREENSHOTS, `fork-dialog-${width}.png`) });
          if (width === LAPTOP.width) {
            await page.keyboard.press("Escape");
            await expect.poll(() => dialog.count(), WIDE).toBe(0);
          }
        }

        // The edit, on the phone: the fork's page opens, says what it forked from, and its answer reads the edited result.
        const before = await runsOf(parent.sessionId);
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
        for (const { width, height } of [PHONE, LAPTOP]) {
          await page.setViewportSize({ width, height });
          expect(await pageWidth(page)).toBeLessThanOrEqual(width);
        }
      } finally {
        await page.close();
      }
    });
  });
});
