import { describe, expect, it } from "vitest";
import type { TenantSettings } from "../../../../shared/contracts/api.js";
import { StepwiseError } from "../../../../shared/errors.js";
import { resolveRunSetup } from "../../../../shared/run/runSetup.js";
import { saveAgent } from "../../../../shared/run/savedAgents.js";
import { submitRun } from "../../../../shared/run/submit.js";
import { memoryPorts } from "../../../../shared/testing/memoryPorts.js";

/** The rules every door applies to a new run (saved agent, instructions), and saving an agent, over in-memory ports. */

const links = { api: "http://api.test", stream: "http://stream.test", console: false };

function setup(tenant: TenantSettings = {}) {
  const { ports: services, fakes } = memoryPorts();
  void services.tenantSettings.put("acme", tenant); // the fake keeps it at once
  return { services, fakes };
}

async function refusal(promise: Promise<unknown>): Promise<StepwiseError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StepwiseError);
  return error as StepwiseError;
}

describe("resolveRunSetup", () => {
  it("joins the tenant's, the saved agent's and the run's instructions, in that order", async () => {
    const { services } = setup({ instructions: "House rule: cite sources." });
    await services.savedAgents.save("acme", "analyst", { instructions: "Answer in French." });
    const setupOf = await resolveRunSetup(services, "acme", {
      input: "Hi",
      mode: "auto",
      agent: "analyst",
      instructions: "Keep it under 100 words.",
    });
    expect(setupOf.instructions).toBe("House rule: cite sources.\n\nAnswer in French.\n\nKeep it under 100 words.");
  });

  it("a saved agent fills the mode left at auto and the approval left unset; the request's own choices win", async () => {
    const { services } = setup();
    await services.savedAgents.save("acme", "analyst", {
      mode: "plan_solve",
      approval: { plan: true, tools: "write" },
      tools: ["calculator"],
    });
    const open = await resolveRunSetup(services, "acme", { input: "Hi", mode: "auto", agent: "analyst" });
    expect(open.request).toMatchObject({ mode: "plan_solve", approval: { plan: true, tools: "write" } });
    expect(open.agent).toEqual({ name: "analyst", version: 1, tools: ["calculator"] });
    const own = await resolveRunSetup(services, "acme", {
      input: "Hi",
      mode: "react",
      agent: "analyst",
      approval: { plan: false, tools: "none" },
    });
    expect(own.request).toMatchObject({ mode: "react", approval: { plan: false, tools: "none" } });
  });

  it("a run names the latest version or one version, and keeps the one it resolved when a new one is saved", async () => {
    const { services } = setup();
    await services.savedAgents.save("acme", "analyst", { tools: ["calculator"] });
    const { request, ...first } = await resolveRunSetup(services, "acme", { input: "Hi", mode: "react", agent: "analyst" });
    const { run } = await submitRun(services, "acme", request, { links, ...first });
    await services.savedAgents.save("acme", "analyst", { tools: ["text_stats"] });
    expect((await services.runs.get(run.runId))?.agent).toEqual({ name: "analyst", version: 1, tools: ["calculator"] });
    expect((await resolveRunSetup(services, "acme", { input: "Hi", mode: "react", agent: "analyst" })).agent?.version).toBe(2);
    expect((await resolveRunSetup(services, "acme", { input: "Hi", mode: "react", agent: "analyst@1" })).agent?.tools).toEqual([
      "calculator",
    ]);
    await services.savedAgents.delete("acme", "analyst");
    expect((await services.runs.get(run.runId))?.agent?.version).toBe(1);
  });

  it.each([
    ["an unknown saved agent", { agent: "nobody" }, "unknown_agent", /No saved agent named nobody/],
    ["an unknown version", { agent: "analyst@7" }, "unknown_agent", /has no version 7; its latest is 1/],
    ["a malformed agent name", { agent: "Analyst!" }, "invalid_agent", /agent:/],
    ["instructions over the limit", { instructions: "x".repeat(4_001) }, "invalid_instructions", /at most 4000 characters/],
    ["instructions with control characters", { instructions: "ok\u0007" }, "invalid_instructions", /control characters/],
  ])("%s is a 400 naming the problem", async (_, fields, code, message) => {
    const { services } = setup();
    await services.savedAgents.save("acme", "analyst", {});
    const error = await refusal(resolveRunSetup(services, "acme", { input: "Hi", mode: "auto", ...fields }));
    expect([error.statusCode, error.code]).toEqual([400, code]);
    expect(error.message).toMatch(message);
  });
});

describe("saveAgent", () => {
  it("saves an allow-list of the tenant's own tools and a model the deployment offers", async () => {
    const { services } = setup();
    const saved = await saveAgent(services, "acme", "analyst", {
      tools: ["calculator", "ask_user"],
      roles: { executor: { model: services.settings.model.name, temperature: 0.2 } },
    });
    expect(saved).toMatchObject({ name: "analyst", version: 1, tools: ["calculator", "ask_user"] });
  });

  it("a tool the tenant lacks, or a model the deployment does not offer, is a 400 naming it, and nothing is saved", async () => {
    const { services } = setup();
    const tool = await refusal(saveAgent(services, "acme", "analyst", { tools: ["calculator", "launch_rockets"] }));
    expect([tool.statusCode, tool.code]).toEqual([400, "unknown_tool"]);
    expect(tool.message).toContain("launch_rockets");
    const model = await refusal(saveAgent(services, "acme", "analyst", { roles: { planner: { model: "gpt-9-ultra" } } }));
    expect([model.statusCode, model.code]).toEqual([400, "model_not_allowed"]);
    expect(model.message).toContain("planner: gpt-9-ultra");
    expect(await services.savedAgents.list("acme")).toEqual([]);
  });
});
