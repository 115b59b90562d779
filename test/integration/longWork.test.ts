import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTINUE_CUT_REPLY } from "../../shared/llm/outputLimit.js";
import { COMPACTED_PREFIX } from "../../shared/memory/compaction.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type ScriptedModel, startScriptedModel } from "../support/scriptedModel.js";
import { answer, callTools, last, marker, ScriptRouter } from "../support/scriptedRoles.js";
import { type StrictProvider, startStrictProvider } from "../support/strictProvider.js";

/**
 * Long work on a strict provider, over the whole local stack and the real `openai` client: a
 * ReAct run reads a ~100 KB upload in 8,000-character chunks through a 16k-token window whose
 * provider cuts every reply at 300 tokens (and refuses a larger limit), and answers in full.
 */

const FILE = Array.from({ length: 3_000 }, (_, i) => `line ${i + 1}: measurement ${(i * 37) % 1000} units`).join("\n");
const ANSWER = Array.from({ length: 40 }, (_, i) => `Part ${i + 1}: lines ${i * 75 + 1} to ${(i + 1) * 75} were read and measured.`).join(
  "\n",
);

const router = new ScriptRouter(() => answer("OK."));
let scripted: ScriptedModel;
let strict: StrictProvider | undefined;
let stack: RunningStack | undefined;
let client: Client;

beforeAll(async () => {
  scripted = await startScriptedModel(router.script);
  try {
    strict = await startStrictProvider(scripted.url, { windowTokens: 16_000, maxOutputTokens: 300 });
    stack = await startStack(
      {
        OPENAI_BASE_URL: strict.url,
        OPENAI_API_KEY: "test",
        STEPWISE_MODEL: "gpt-4o",
        STEPWISE_ROLE_SETTINGS: JSON.stringify({ default: { contextWindow: 16_000, maxOutputTokens: 1_000 } }),
      },
      ["other"],
      { readyTimeoutMs: 240_000 },
    );
  } catch (error) {
    await strict?.close();
    await scripted.close();
    throw error;
  }
  client = new Client(stack.url, stack.apiKey);
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  await strict?.close();
  await scripted?.close();
});

describe("a ReAct run that reads a ~100 KB file through a 16k window", () => {
  router.on("long-read", (turn) => {
    if (turn.role !== "react") return answer("OK.");
    const latest = last(turn);
    if (latest.role === "user" && latest.content === CONTINUE_CUT_REPLY) {
      // Asked to go on, the model repeats the end of what it wrote, then continues.
      const soFar = turn.messages.at(-2)!.content;
      return answer(ANSWER.slice(Math.max(0, soFar.length - 30)));
    }
    if (latest.role === "tool" && latest.content.includes("That is the end of the file.")) return answer(ANSWER);
    const offset = latest.role === "tool" ? Number(latest.content.match(/"offset": (\d+)\}/)?.[1]) : 0;
    return callTools([{ name: "read_artifact", arguments: { filename: "measurements.txt", offset, length: 8_000 } }]);
  });
  let run: any;
  beforeAll(async () => {
    const res = await fetch(`${client.url}/v1/files?name=measurements.txt`, {
      method: "POST",
      headers: { authorization: `Bearer ${client.apiKey}`, "content-type": "text/plain" },
      body: FILE,
    });
    const { fileId } = (await res.json()) as { fileId: string };
    const { runId } = await client.submit({
      input: `${marker("long-read")} Read measurements.txt to its end.`,
      mode: "react",
      files: [fileId],
    });
    ({ run } = await client.waitForEnd(runId, 300_000));
  }, 320_000);

  it("succeeds with the whole answer, continued past the output limit and joined without repetition", () => {
    expect(FILE.length).toBeGreaterThan(95_000);
    expect(run.status).toBe("succeeded");
    expect(run.result).toBe(ANSWER);
    expect(strict!.requests.filter((r) => r.cut).length).toBeGreaterThanOrEqual(2);
  });

  it("read every chunk, compacting old ones to fit: no request refused for tools, reasoning or pairing", () => {
    const reads = router.of("long-read", "react").filter((t) => last(t).role === "tool");
    expect(reads.length).toBeGreaterThanOrEqual(Math.ceil(FILE.length / 8_000));
    const refused = strict!.refusals();
    // The only refusal is the first output limit above the model's 300: lowered, never again.
    expect(refused.map((r) => r.error.message.slice(0, 22))).toEqual(["max_tokens is too larg"]);
    const lastRead = reads.at(-1)!;
    expect(lastRead.messages.some((m) => m.role === "tool" && m.content.startsWith(COMPACTED_PREFIX))).toBe(true);
  });
});
