import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseSettings } from "../../../../infra/aws/config.js";
import { StepError } from "../../../../shared/errors.js";
import { OpenAIModel } from "../../../../shared/llm/openaiModel.js";
import { withOutputLimit } from "../../../../shared/llm/outputLimit.js";
import { RoleModel } from "../../../../shared/llm/roleModel.js";
import type { RoleSettings } from "../../../../shared/llm/roleSettings.js";
import { COMPACTED_PREFIX } from "../../../../shared/memory/compaction.js";
import { settingsFromEnv } from "../../../../shared/settings.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { defineTool } from "../../../../shared/tools/tool.js";
import { agentLoopOnRun } from "../../../support/memoryRun.js";
import { type ScriptedModel, type ScriptedRequest, startScriptedModel } from "../../../support/scriptedModel.js";
import { type ProviderLimits, type StrictProvider, startStrictProvider } from "../../../support/strictProvider.js";

// An agent's own turn within a small window: a file of ~100 KB read in 8,000-character chunks by
// a model whose provider (the strict stand-in) refuses anything over its 16k-token window.

const CHUNK = 8_000;
const FILE = Array.from({ length: 3_000 }, (_, i) => `line ${i + 1}: measurement ${(i * 37) % 1000} units`).join("\n");
const CHUNKS = Math.ceil(FILE.length / CHUNK);

let scripted: ScriptedModel;
let strict: StrictProvider;
afterEach(async () => {
  await strict?.close();
  await scripted?.close();
  (strict as unknown) = (scripted as unknown) = undefined;
});

/** Reads the file chunk by chunk (the offset it has reached is the number of results it has seen), then answers. */
function reader(request: ScriptedRequest) {
  const results = request.messages.filter((m) => m.role === "tool").length;
  if (results < CHUNKS)
    return { toolCalls: [{ name: "read_file", arguments: { offset: results * CHUNK, length: CHUNK }, id: `call_${results}` }] };
  return { text: `Read all ${CHUNKS} chunks.` };
}

const readFile = defineTool({
  name: "read_file",
  description: "Reads part of the file.",
  access: "read",
  parameters: z.object({ offset: z.number(), length: z.number() }),
  run: async ({ offset, length }) => FILE.slice(offset, offset + length),
});

async function start(limits: ProviderLimits, roles: RoleSettings) {
  scripted = await startScriptedModel(reader);
  strict = await startStrictProvider(scripted.url, limits);
  const model = new RoleModel(withOutputLimit(new OpenAIModel({ model: "gpt-4o", baseURL: strict.url, apiKey: "k", maxRetries: 0 })), {
    roles,
  });
  const { go } = await agentLoopOnRun(
    model,
    { conversation: [{ role: "user", content: "Read the whole file." }], tools: new ToolRegistry([readFile]), maxRounds: 30 },
    { model: { roles } },
  );
  return go;
}

/** The share of requests whose messages begin with all of the previous request's messages (a provider's cached prefix). */
function prefixShare(requests: StrictProvider["requests"]): number {
  let kept = 0;
  for (let i = 1; i < requests.length; i++) {
    const before = JSON.stringify(requests[i - 1]!.body.messages).slice(0, -1);
    if (JSON.stringify(requests[i]!.body.messages).startsWith(before)) kept++;
  }
  return kept / (requests.length - 1);
}

describe("the agent's own turn fits the model's window", () => {
  it("compacts the oldest rounds in blocks: a ~100 KB file in 8,000-character chunks through a 16k window, nothing refused, the prefix mostly kept", async () => {
    const go = await start(
      { windowTokens: 16_000, maxOutputTokens: 2_000 },
      { default: { contextWindow: 16_000, maxOutputTokens: 2_000 } },
    );
    expect(await go()).toMatchObject({ kind: "answer", text: `Read all ${CHUNKS} chunks.` });
    expect(strict.refusals()).toEqual([]);
    const last = strict.requests.at(-1)!.body.messages as any[];
    const notes = last.filter((m) => m.role === "tool" && m.content.startsWith(COMPACTED_PREFIX));
    expect(notes.length).toBeGreaterThan(0);
    // Each note says how to read the output again; every call still has its result.
    expect(notes[0].content).toContain('call read_file again with {"offset":0,"length":8000}');
    expect(last.filter((m) => m.role === "tool")).toHaveLength(CHUNKS);
    // The newest output is whole.
    expect(last.at(-1).content).toBe(FILE.slice((CHUNKS - 1) * CHUNK, CHUNKS * CHUNK));
    const share = prefixShare(strict.requests);
    console.log(`prompt prefix kept between requests: ${(share * 100).toFixed(0)}% of ${strict.requests.length} requests`);
    expect(FILE.length).toBeGreaterThan(95_000);
    expect(share).toBeGreaterThanOrEqual(0.8);
  });

  it("a provider's context_length_exceeded is answered by compacting and asking again", async () => {
    // The role says 64k, the provider's window is 16k: the provider refuses, the loop compacts to its window.
    const go = await start(
      { windowTokens: 16_000, maxOutputTokens: 2_000 },
      { default: { contextWindow: 64_000, maxOutputTokens: 2_000 } },
    );
    expect(await go()).toMatchObject({ kind: "answer", text: `Read all ${CHUNKS} chunks.` });
    const refusals = strict.refusals();
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.every((r) => r.error.code === "context_length_exceeded")).toBe(true);
    // After a refusal the next request is the compacted one, and it is accepted.
    const refused = strict.requests.findIndex((r) => r.refusal);
    expect(strict.requests[refused + 1]!.refusal).toBeUndefined();
  });

  it("when compaction cannot make room, the error names the window and the size", async () => {
    const go = await start({ windowTokens: 1_500, maxOutputTokens: 500 }, { default: { contextWindow: 64_000, maxOutputTokens: 500 } });
    const error = await go().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepError);
    expect((error as StepError).message).toMatch(/The prompt \(\d+ tokens\) does not fit the model's context window \(1500 tokens\)/);
  });
});

describe("window settings", () => {
  it("refuses a context window or output limit out of range, naming the setting", () => {
    for (const [json, problem] of [
      ['{"react":{"contextWindow":100}}', /STEPWISE_ROLE_SETTINGS\.react\.contextWindow/],
      [
        '{"default":{"contextWindow":16000,"maxOutputTokens":16000}}',
        /STEPWISE_ROLE_SETTINGS\.default\.maxOutputTokens: maxOutputTokens must be less than contextWindow/,
      ],
      ['{"default":{"maxOutputTokens":5000000}}', /STEPWISE_ROLE_SETTINGS\.default\.maxOutputTokens/],
    ] as const) {
      expect(() => settingsFromEnv({ TABLE_NAME: "t", STEPWISE_ROLE_SETTINGS: json })).toThrow(problem);
      // cdk synth reads the same setting (`-c roleSettings=…`) and stops the same way.
      expect(() => parseSettings({ openAiBaseUrl: "https://models.example.com/v1", roleSettings: json })).toThrow(/roleSettings/);
    }
  });
});
