import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../../../shared/contracts/run.js";
import { MAX_TURN_BYTES, writeTurn } from "../../../../shared/memory/session.js";
import { memoryPorts } from "../../../../shared/testing/memoryPorts.js";

/** A session turn (request and answer) is one DynamoDB item: its size is counted in UTF-8 bytes. */
describe("a session turn", () => {
  const run = (input: string) => ({ runId: "run_1", tenantId: "t", sessionId: "ses_1", turn: 1, input }) as RunRecord;

  it("keeps a Chinese request and answer whole when both fit the turn's bytes", async () => {
    const { ports } = memoryPorts();
    const input = "问".repeat(32_000); // 96,000 bytes
    const answer = "答".repeat(60_000); // 180,000 bytes
    await writeTurn(ports, run(input), answer);
    expect((await ports.sessions.messages("t", "ses_1")).map((m) => m.content)).toEqual([input, answer]);
  });

  it("cuts an answer that would pass the turn's bytes between characters, with a note, and never the request", async () => {
    const { ports } = memoryPorts();
    const input = "问".repeat(32_000);
    const answer = "答".repeat(100_000); // 300,000 bytes: with the request, over the turn's budget
    await writeTurn(ports, run(input), answer);
    const [request, kept] = (await ports.sessions.messages("t", "ses_1")).map((m) => m.content);
    expect(request).toBe(input);
    expect(Buffer.byteLength(request!) + Buffer.byteLength(kept!)).toBeLessThanOrEqual(MAX_TURN_BYTES);
    expect(kept).toMatch(/^答+\n\n\[cut at 204000 of 300000 bytes to fit the session's memory; the run keeps the whole answer\]$/);
  });
});
