import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { GuardrailChecks } from "../../../../shared/contracts/guardrails.js";
import type { Decision } from "../../../../shared/guardrails/checks.js";
import { HoldBack } from "../../../../shared/guardrails/holdBack.js";
import type { ChatModel } from "../../../../shared/llm/types.js";
import { agentTurn } from "../../../../shared/steps/agentTurn.js";
import { withRun } from "../../../support/memoryRun.js";

const pii = GuardrailChecks.parse([{ kind: "pii", action: "redact" }]);

function holdBack(checks = pii, windowMs = 5) {
  const released: string[] = [];
  const decisions: Decision[] = [];
  const held = new HoldBack(
    checks,
    (t) => released.push(t),
    (d) => decisions.push(...d),
    windowMs,
  );
  return { held, released, decisions };
}

describe("the hold-back window", () => {
  it("an e-mail address split across chunks and windows is released whole and redacted, never in part", async () => {
    const { held, released, decisions } = holdBack();
    held.push("Write to ana.lo");
    await delay(30); // a window passes: what cannot be part of a span goes out
    expect(released).toEqual(["Write to "]);
    held.push("pez@exam");
    await delay(30);
    held.push("ple.com today.");
    held.close();
    expect(released.join("")).toBe("Write to [redacted email] today.");
    expect(released.join("")).not.toMatch(/ana|pez|exam/);
    expect(decisions.map((d) => [d.check, d.verdict])).toEqual([["pii", "redact"]]);
  });

  it("a phone number with spaces, split at a space, is held until it ends", async () => {
    const { held, released } = holdBack();
    held.push("Call +1 415 ");
    await delay(30);
    held.push("555 0134 now");
    await delay(30);
    held.close();
    expect(released.join("")).toBe("Call [redacted phone] now");
    expect(released.some((r) => r.includes("415"))).toBe(false);
  });

  it("a block stops the stream: nothing more is released", async () => {
    const { held, released, decisions } = holdBack(GuardrailChecks.parse([{ kind: "regex", action: "block", pattern: "secret plan" }]));
    held.push("Here is the ");
    await delay(30);
    held.push("secret plan in full.");
    held.close();
    expect(released.join("")).toBe("Here is the ");
    expect(held.blocked).toBe(true);
    expect(decisions[0]).toMatchObject({ verdict: "block" });
  });

  it("with a service-backed block check (moderation), nothing streams: the answer comes whole once checked", () => {
    const { held, released } = holdBack(GuardrailChecks.parse([{ kind: "moderation", action: "block" }]));
    held.push("Hello there.");
    held.close();
    expect(held.holdsAll).toBe(true);
    expect(released).toEqual([]);
  });
});

/** A model that streams its answer in the given deltas, a pause between them. */
function streamingModel(deltas: string[]): ChatModel {
  return {
    name: "gpt-4o-mini",
    async complete(request) {
      for (const d of deltas) {
        request.onText?.(d);
        await delay(150);
      }
      return { content: deltas.join(""), toolCalls: [], finishReason: "stop", usage: { promptTokens: 20, completionTokens: 10 } };
    },
  };
}

describe("output guardrails on a ReAct run", () => {
  it("an e-mail address streamed across two deltas reaches no event, answer or session turn; the redacted answer does", async () => {
    const model = streamingModel(["Your contact is ana.lopez@exa", "mple.com, write any time."]);
    const { ports, fakes, runId, run } = await withRun(
      { status: "running", requestedMode: "react", mode: "react", guardrails: pii },
      { model },
    );
    const output = await agentTurn({ runId, mode: "react" }, ports);
    expect(output.done).toBe(true);
    const events = fakes.events.all(runId);
    const streamed = events.filter((e) => e.type === "agent.delta").map((e) => (e.data as { text: string }).text);
    expect(streamed.join("")).toBe("Your contact is [redacted email], write any time.");
    expect(JSON.stringify(events)).not.toContain("ana.lopez");
    expect(JSON.stringify(events)).not.toContain("mple.com");
    expect(events.some((e) => e.type === "guardrail.decided" && (e.data as { verdict: string }).verdict === "redact")).toBe(true);
    const after = await ports.runs.get(runId);
    expect(after?.result).toBe("Your contact is [redacted email], write any time.");
    expect(JSON.stringify(await ports.sessions.messages(run.tenantId, run.sessionId))).not.toContain("ana.lopez");
  });
});
