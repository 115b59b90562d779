import { afterEach, describe, expect, it } from "vitest";
import { functionEnvironment, parseSettings } from "../../../../infra/aws/config.js";
import { OpenAIModel } from "../../../../shared/llm/openaiModel.js";
import { RoleModel } from "../../../../shared/llm/roleModel.js";
import { settingsFor, toolCapFor } from "../../../../shared/llm/roleSettings.js";
import { settingsFromEnv } from "../../../../shared/settings.js";
import { type Script, type ScriptedModel, startScriptedModel } from "../../../support/scriptedModel.js";

const messages = [{ role: "user" as const, content: "Hi" }];
let servers: ScriptedModel[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function serve(script: Script) {
  const server = await startScriptedModel(script);
  servers.push(server);
  return server;
}

describe("per-role generation settings", () => {
  it("sends each role's settings: JD Genie's defaults, then every role's, then the role's own", async () => {
    const server = await serve(() => ({ text: "ok" }));
    const model = new RoleModel(new OpenAIModel({ model: "main-model", baseURL: server.url, maxRetries: 0 }), {
      roles: {
        default: { temperature: 0.3 },
        planner: { model: "planner-model", reasoningEffort: "low", maxOutputTokens: 1600 },
        react: { temperature: null },
      },
    });
    for (const role of ["summarizer", "planner", "executor", "react"] as const) await model.complete({ messages, role });
    const [summarizer, planner, executor, react] = server.requests;
    expect(summarizer).toMatchObject({ model: "main-model", temperature: 0.3, max_tokens: 8192 });
    expect(planner).toMatchObject({ model: "planner-model", temperature: 0.3, max_tokens: 1600, reasoning_effort: "low" });
    expect(executor).toMatchObject({ model: "main-model", temperature: 0.3, max_tokens: 8192 });
    expect(executor).not.toHaveProperty("reasoning_effort");
    expect(react).not.toHaveProperty("temperature");
    expect(settingsFor("summarizer")).toEqual({ maxOutputTokens: 8192, temperature: 0.01 });
  });

  it("names the output limit max_completion_tokens where the endpoint wants it (OpenAI, Azure)", async () => {
    const server = await serve(() => ({ text: "ok" }));
    await new OpenAIModel({ model: "o4-mini", baseURL: server.url, maxRetries: 0, maxTokensField: "max_completion_tokens" }).complete({
      messages,
      settings: { maxOutputTokens: 500 },
    });
    expect(server.requests[0]).toMatchObject({ max_completion_tokens: 500 });
    expect(server.requests[0]).not.toHaveProperty("max_tokens");
    expect(settingsFromEnv({ TABLE_NAME: "t" }).model.maxTokensField).toBe("auto");
  });

  it("sends a provider's own request fields per role (every role's and the role's own together), as given", async () => {
    const server = await serve(() => ({ text: "ok" }));
    const model = new RoleModel(new OpenAIModel({ model: "qwen3-8b", baseURL: server.url, maxRetries: 0 }), {
      roles: {
        default: { requestFields: { chat_template_kwargs: { enable_thinking: false } } },
        planner: { requestFields: { enable_thinking: true, top_k: 20 } },
        summarizer: { requestFields: null },
      },
    });
    for (const role of ["planner", "executor", "summarizer"] as const) await model.complete({ messages, role });
    const [planner, executor, summarizer] = server.requests as unknown as Record<string, unknown>[];
    expect(planner).toMatchObject({ chat_template_kwargs: { enable_thinking: false }, enable_thinking: true, top_k: 20 });
    expect(executor).toMatchObject({ chat_template_kwargs: { enable_thinking: false } });
    expect(executor).not.toHaveProperty("enable_thinking");
    expect(summarizer).not.toHaveProperty("chat_template_kwargs");
  });

  it("refuses provider fields that replace Stepwise's own, and reasoning settings of the wrong type, naming the setting", () => {
    for (const [json, problem] of [
      ['{"react":{"requestFields":{"max_tokens":10}}}', /STEPWISE_ROLE_SETTINGS\.react\.requestFields.*Stepwise writes itself/],
      ['{"default":{"requestFields":{"bad field":1}}}', /STEPWISE_ROLE_SETTINGS\.default\.requestFields/],
      ['{"default":{"requestFields":[1]}}', /STEPWISE_ROLE_SETTINGS\.default\.requestFields/],
      ['{"executor":{"reasoningReplay":"yes"}}', /STEPWISE_ROLE_SETTINGS\.executor\.reasoningReplay/],
    ] as const) {
      expect(() => settingsFromEnv({ TABLE_NAME: "t", STEPWISE_ROLE_SETTINGS: json })).toThrow(problem);
      expect(() => parseSettings({ openAiBaseUrl: "https://models.example.com/v1", roleSettings: json })).toThrow(/roleSettings/);
    }
  });

  it("reads role settings from the environment and from deployment settings, and says what is wrong", () => {
    const json = '{"summarizer":{"temperature":0.2},"planner":{"model":"qwen-plus"}}';
    expect(settingsFromEnv({ TABLE_NAME: "t", STEPWISE_ROLE_SETTINGS: json }).model.roles).toEqual({
      summarizer: { temperature: 0.2 },
      planner: { model: "qwen-plus" },
    });
    expect(() => settingsFromEnv({ TABLE_NAME: "t", STEPWISE_ROLE_SETTINGS: '{"summariser":{}}' })).toThrow(
      /STEPWISE_ROLE_SETTINGS.*summariser/,
    );
    expect(() => settingsFromEnv({ TABLE_NAME: "t", STEPWISE_ROLE_SETTINGS: '{"planner":{"temperature":7}}' })).toThrow(
      /STEPWISE_ROLE_SETTINGS\.planner\.temperature/,
    );
    const deployed = parseSettings({
      openAiBaseUrl: "https://models.example.com/v1",
      roleSettings: { planner: { reasoningEffort: "high" } },
      fallbackModel: "small",
    });
    expect(functionEnvironment(deployed)).toMatchObject({
      STEPWISE_ROLE_SETTINGS: '{"planner":{"reasoningEffort":"high"}}',
      STEPWISE_FALLBACK_MODEL: "small",
    });
    expect(() => parseSettings({ openAiBaseUrl: "https://models.example.com/v1", roleSettings: "not json" })).toThrow(/roleSettings/);
  });

  it("caps the tools of a request per role (default 128), validated, and never sends the cap as a request field", async () => {
    const roles = { default: { maxTools: 64 }, executor: { maxTools: 32 } };
    expect([toolCapFor("executor", roles), toolCapFor("react", roles), toolCapFor("react"), toolCapFor(undefined, {})]).toEqual([
      32, 64, 128, 128,
    ]);
    for (const bad of ['{"react":{"maxTools":8}}', '{"react":{"maxTools":2000}}', '{"react":{"maxTools":50.5}}']) {
      expect(() => settingsFromEnv({ TABLE_NAME: "t", STEPWISE_ROLE_SETTINGS: bad })).toThrow(/STEPWISE_ROLE_SETTINGS\.react\.maxTools/);
    }
    expect(() => parseSettings({ openAiBaseUrl: "https://models.example.com/v1", roleSettings: { planner: { maxTools: 0 } } })).toThrow(
      /roleSettings.*maxTools/,
    );
    expect(settingsFor("executor", roles)).not.toHaveProperty("maxTools");
    const server = await serve(() => ({ text: "ok" }));
    await new RoleModel(new OpenAIModel({ model: "m", baseURL: server.url, maxRetries: 0 }), { roles }).complete({
      role: "executor",
      messages,
    });
    expect(server.requests[0]).not.toHaveProperty("maxTools");
  });
});

describe("the fallback model", () => {
  it("answers when the first model stays unavailable after its retries, and says so", async () => {
    const first = await serve([{ status: 503 }, { status: 503 }]);
    const second = await serve([{ text: "From the fallback." }]);
    const model = new RoleModel(new OpenAIModel({ model: "big", baseURL: first.url, maxRetries: 1 }), {
      roles: { planner: { model: "big-planner" } },
      fallback: new OpenAIModel({ model: "small", baseURL: second.url, maxRetries: 0 }),
    });
    const response = await model.complete({ messages, role: "planner" });
    expect(response).toMatchObject({ content: "From the fallback.", model: "small", fallback: true });
    expect(first.requests).toHaveLength(2);
    expect(second.requests[0]).toMatchObject({ model: "small" });
  });

  it("is not asked when the first model rejects the request (a 400 fails the same everywhere)", async () => {
    const first = await serve([{ status: 400, message: "bad request" }]);
    const second = await serve([{ text: "never" }]);
    const model = new RoleModel(new OpenAIModel({ model: "big", baseURL: first.url, maxRetries: 0 }), {
      fallback: new OpenAIModel({ model: "small", baseURL: second.url, maxRetries: 0 }),
    });
    await expect(model.complete({ messages })).rejects.toMatchObject({ name: "Stepwise.ModelRejected" });
    expect(second.requests).toHaveLength(0);
  });
});
