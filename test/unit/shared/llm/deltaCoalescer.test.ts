import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { EventBody } from "../../../../shared/contracts/events.js";
import { DeltaCoalescer } from "../../../../shared/llm/deltaCoalescer.js";

describe("DeltaCoalescer", () => {
  it("holds back a placeholder split across flushes until it is whole, then writes it restored", async () => {
    const written: EventBody[] = [];
    const deltas = new DeltaCoalescer(async (text) => void written.push({ type: "agent.delta", data: { agent: "summarizer", text } }), {
      restore: (text) => text.replaceAll("[url:1]", "https://example.com/a-long-address"),
      intervalMs: 1,
    });
    for (const piece of ["See [", "url", ":1", "] and [url:1]", " too ["]) {
      deltas.push(piece);
      await delay(20); // each piece is flushed on its own
    }
    await deltas.close();
    const texts = written.map((e) => (e.data as { text: string }).text);
    expect(texts.join("")).toBe("See https://example.com/a-long-address and https://example.com/a-long-address too [");
    expect(texts.some((t) => /\[u|url:/.test(t))).toBe(false);
  });
});
