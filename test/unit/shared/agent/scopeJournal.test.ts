import { describe, expect, it } from "vitest";
import { ScopeJournal } from "../../../../shared/agent/scopeJournal.js";
import type { JournalCommit } from "../../../../shared/ports/journal.js";

describe("one scope's flushes", () => {
  /** A writer whose writes wait until released, one by one, and record what they wrote. */
  function gatedWriter(fail: (call: number) => boolean = () => false) {
    const written: string[][] = [];
    const gates: (() => void)[] = [];
    const writer = {
      commit: async (_runId: string, { records }: JournalCommit) => {
        const call = written.push(records.map((record) => `round ${record.round} ${record.kind}`));
        await new Promise<void>((resolve) => gates.push(resolve));
        if (fail(call)) throw new Error("ProvisionedThroughputExceededException");
      },
    };
    return { writer, written, releaseNext: () => gates.shift()?.() };
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

  it("are written one after another: a later round is never stored before the rounds under it, and an empty flush waits for the one in flight", async () => {
    const { writer, written, releaseNext } = gatedWriter();
    const scope = new ScopeJournal(writer, "run_1", "react");
    scope.record(0, "llm", "", "first");
    const first = scope.flush();
    await settle(); // round 1 is recorded while round 0 is being written
    scope.record(1, "llm", "", "second");
    const second = scope.flush();
    let emptyDone = false;
    const empty = scope.flush().then(() => (emptyDone = true));
    await settle();
    expect(written).toEqual([["round 0 llm"]]);
    releaseNext();
    await first;
    await settle();
    expect(written).toEqual([["round 0 llm"], ["round 1 llm"]]);
    expect(emptyDone).toBe(false);
    releaseNext();
    await Promise.all([second, empty]);
    expect(emptyDone).toBe(true);
  });

  it("a failed flush fails its caller; its records are written by the next flush, before that flush's own", async () => {
    const { writer, written, releaseNext } = gatedWriter((call) => call === 1);
    const scope = new ScopeJournal(writer, "run_1", "react");
    scope.record(0, "llm", "", "first");
    const first = scope.flush();
    await settle();
    scope.record(1, "llm", "", "second");
    const second = scope.flush();
    releaseNext();
    await expect(first).rejects.toThrow("ProvisionedThroughputExceededException");
    await settle();
    releaseNext();
    await second;
    expect(written).toEqual([["round 0 llm"], ["round 0 llm", "round 1 llm"]]);
  });
});
