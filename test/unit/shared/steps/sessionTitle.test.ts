import { describe, expect, it } from "vitest";
import { respond } from "../../../../infra/offlineModel/brain.js";
import { settingsFor } from "../../../../shared/llm/roleSettings.js";
import { finalize } from "../../../../shared/steps/finalize.js";
import { cleanTitle, MAX_TITLE_CHARS, titlePrompt } from "../../../../shared/steps/sessionTitle.js";
import { ScriptedModel } from "../../../../shared/testing/scriptedModel.js";
import { withRun } from "../../../support/memoryRun.js";

/** A run of a session that has answered (its turn is written), as Finalize finds it. */
async function answeredRun(model: ScriptedModel, options: { titles?: boolean; sessionId?: string; input?: string } = {}) {
  const made = await withRun(
    {
      status: "running",
      sessionId: options.sessionId ?? "ses_1",
      input: options.input ?? "Compare sales by region in sales.csv",
      result: "North leads with 1,200.",
    },
    { model, settings: { model: { sessionTitles: options.titles ?? true } } },
  );
  await made.ports.sessions.claim(made.run.tenantId, made.run.sessionId, made.runId, { queue: false });
  return made;
}

const titleCalls = (model: ScriptedModel) => model.requests.filter((r) => r.role === "title");

describe("session titles", () => {
  it("after a session's first answered turn, one title call names the session and the run that answered; the run still succeeds first", async () => {
    const model = new ScriptedModel([{ text: 'Title: "Sales by region."', usage: { promptTokens: 40, completionTokens: 6 } }]);
    const { ports, fakes, runId, run } = await answeredRun(model);

    expect(await finalize({ runId }, ports)).toEqual({ runId, status: "succeeded" });

    expect(titleCalls(model)).toHaveLength(1);
    const [request] = titleCalls(model);
    expect(request.tools ?? []).toEqual([]);
    expect(request.messages.at(-1)?.content).toContain("Request: Compare sales by region in sales.csv");
    expect(request.messages.at(-1)?.content).toContain("Answer: North leads with 1,200.");
    expect(await ports.sessions.title(run.tenantId, run.sessionId)).toBe("Sales by region");
    const after = await ports.runs.get(runId);
    expect(after).toMatchObject({ status: "succeeded", title: "Sales by region" });
    // The call is the run's: counted in its usage.
    expect(after?.usage).toMatchObject({ llmCalls: run.usage.llmCalls + 1, promptTokens: run.usage.promptTokens + 40 });
    expect(fakes.events.all(runId).at(-1)?.type).toBe("run.succeeded");
  });

  it("a later turn of a titled session makes no title call", async () => {
    const model = new ScriptedModel([{ text: "Sales by region" }]);
    const first = await answeredRun(model);
    await finalize({ runId: first.runId }, first.ports);
    const secondId = "run_second";
    await first.ports.runs.create({ ...first.run, runId: secondId, status: "running", input: "And by month?" });
    await first.ports.sessions.claim(first.run.tenantId, first.run.sessionId, secondId, { queue: false });

    expect(await finalize({ runId: secondId }, first.ports)).toEqual({ runId: secondId, status: "succeeded" });
    expect(titleCalls(model)).toHaveLength(1);
    expect(await first.ports.sessions.title(first.run.tenantId, first.run.sessionId)).toBe("Sales by region");
    expect((await first.ports.runs.get(secondId))?.title).toBeUndefined();
  });

  it("a model that fails to title never fails the run: the session stays untitled, and the next answered turn titles it", async () => {
    const model = new ScriptedModel([new Error("the model is down"), { text: "  " }, { text: "Regional sales" }]);
    const { ports, runId, run } = await answeredRun(model);
    expect(await finalize({ runId }, ports)).toEqual({ runId, status: "succeeded" });
    expect(await ports.runs.get(runId)).toMatchObject({ status: "succeeded" });
    expect(await ports.sessions.title(run.tenantId, run.sessionId)).toBeUndefined();

    // An empty reply is no title either.
    await ports.runs.create({ ...run, runId: "run_2", status: "running" });
    await ports.sessions.claim(run.tenantId, run.sessionId, "run_2", { queue: false });
    await finalize({ runId: "run_2" }, ports);
    expect(await ports.sessions.title(run.tenantId, run.sessionId)).toBeUndefined();

    await ports.runs.create({ ...run, runId: "run_3", status: "running" });
    await ports.sessions.claim(run.tenantId, run.sessionId, "run_3", { queue: false });
    await finalize({ runId: "run_3" }, ports);
    expect(await ports.sessions.title(run.tenantId, run.sessionId)).toBe("Regional sales");
    expect(titleCalls(model)).toHaveLength(3);
  });

  it("with STEPWISE_SESSION_TITLES off, no title call is made", async () => {
    const model = new ScriptedModel([]);
    const { ports, runId, run } = await answeredRun(model, { titles: false });
    expect(await finalize({ runId }, ports)).toEqual({ runId, status: "succeeded" });
    expect(model.requests).toEqual([]);
    expect(await ports.sessions.title(run.tenantId, run.sessionId)).toBeUndefined();
  });

  it("a reply is cleaned to one line: no label, heading, quotes or final period; a long one is cut at a word", () => {
    expect(cleanTitle('Title: "Sales by region."')).toBe("Sales by region");
    expect(cleanTitle("\n# 销售地区分析。\nmore text")).toBe("销售地区分析");
    expect(cleanTitle("**Quarterly   revenue review**")).toBe("Quarterly revenue review");
    expect(cleanTitle(" \n ")).toBeUndefined();
    const long = cleanTitle("word ".repeat(40));
    expect(long?.length).toBeLessThanOrEqual(MAX_TITLE_CHARS);
    expect(long).toMatch(/^(word )+word…$/);
  });

  it("the title role takes the router's settings (the run's cheap call) unless it has its own", () => {
    const roles = { default: { temperature: 0.5 }, router: { model: "gpt-4o-mini", temperature: 0 }, planner: { model: "o4-mini" } };
    expect(settingsFor("title", roles)).toMatchObject({ model: "gpt-4o-mini", temperature: 0 });
    expect(settingsFor("title", { ...roles, title: { model: "gpt-4.1-nano" } })).toMatchObject({ model: "gpt-4.1-nano", temperature: 0 });
    expect(settingsFor("title", { default: { model: "qwen-max" } })).toMatchObject({ model: "qwen-max" });
  });

  it("the offline model titles from the request alone: its first words, deterministically, in any script", () => {
    const title = (request: string) => respond({ messages: titlePrompt(request, "Some answer. It is long.") }).content;
    expect(title("analyse sales.csv by region and plot the totals. Then write a report.")).toBe("Analyse sales.csv by region and plot");
    expect(title("What is 2+2?")).toBe("What is 2+2");
    expect(title("请分析一下销售数据的地区分布并画一张图。然后写报告")).toBe("请分析一下销售数据的地区分布并…");
    expect(title("What is 2+2?")).toBe(title("What is 2+2?"));
  });
});
