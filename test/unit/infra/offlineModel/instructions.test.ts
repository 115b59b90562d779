import { describe, expect, it } from "vitest";
import { respond } from "../../../../infra/offlineModel/brain.js";
import { operatorInstructions } from "../../../../infra/offlineModel/instructions.js";
import { routerPrompt, summarizerPrompt } from "../../../../shared/agent/prompts.js";

const SUMMARY_REQUEST = "Request: Compute 17*23\n\nTask results:\n- Multiply: 17*23 = 391";
const summary = (instructions?: string) =>
  respond({
    messages: [
      { role: "system", content: summarizerPrompt({ instructions }) },
      { role: "user", content: SUMMARY_REQUEST },
    ],
  }).content ?? "";

/** The offline model acts on the operator's instructions it can show without reasoning, from its request only. */
describe("the offline model and the operator's instructions", () => {
  it("reads the instructions block of the prompt, and nothing after it", () => {
    const messages = [{ role: "system" as const, content: summarizerPrompt({ instructions: "House rule one.\n\nHouse rule two." }) }];
    expect(operatorInstructions(messages)).toBe("House rule one.\n\nHouse rule two.");
    expect(operatorInstructions([{ role: "system", content: summarizerPrompt() }])).toBe("");
  });

  it("starts and ends every answer with the texts a house rule names, and labels it in the language asked for", () => {
    const plain = summary();
    expect(plain).toMatch(/^Answer to: Compute 17\*23/);
    const ruled = summary(
      'House rule: answer in French. Start every answer with "Bonjour." and end each answer with "— L\'équipe Stepwise".',
    );
    expect(ruled).toBe(`Bonjour.\n\nRéponse :\n\n${plain}\n\n— L'équipe Stepwise`);
    // Deterministic: the same request, the same answer.
    expect(summary("Answer in German.")).toBe(`Antwort:\n\n${plain}`);
    expect(summary("Answer in German.")).toBe(summary("Answer in German."));
  });

  it("a direct answer follows them too; instructions it cannot act on change nothing, and tool calls are never changed", () => {
    const ask = (instructions: string, input: string) =>
      respond({
        messages: [
          { role: "system", content: routerPrompt({ instructions }) },
          { role: "user", content: `Request: ${input}` },
        ],
        tools: [{ type: "function", function: { name: "choose_mode", parameters: { type: "object", properties: {} } } }],
      });
    const hello = ask('Sign every reply with "-- Acme support"', "Hello!");
    expect(hello.content).toMatch(/\n\n-- Acme support$/);
    expect(ask("Be kind and cite every figure.", "Hello!").content).toBe(ask("", "Hello!").content);
    const routed = ask('End every answer with "-- Acme support"', "Compute 17*23 and (120/8)+2^5, then write a short report");
    expect(routed.content).toBeNull();
    expect(routed.toolCalls.map((c) => c.name)).toEqual(["choose_mode"]);
  });
});
