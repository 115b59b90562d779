import { describe, expect, it } from "vitest";
import { startTogether } from "../../../support/startTogether.js";

/** A stand-in for a stack or a server: records whether it was stopped. */
function started(name: string, log: string[], kind: "stop" | "close" = "stop") {
  const stop = async () => {
    log.push(`${name} stopped`);
  };
  return kind === "stop" ? { name, stop } : { name, close: stop };
}

describe("startTogether", () => {
  it("hands back everything started, in order, when all start", async () => {
    const log: string[] = [];
    const [a, b] = await startTogether(Promise.resolve(started("a", log)), Promise.resolve(started("b", log, "close")));
    expect([a.name, b.name]).toEqual(["a", "b"]);
    expect(log).toEqual([]);
  });

  it("when one fails, stops the ones that started (also those that finish starting later), then throws its error", async () => {
    const log: string[] = [];
    const slow = new Promise<ReturnType<typeof started>>((resolve) => setTimeout(() => resolve(started("slow", log, "close")), 50));
    await expect(startTogether(Promise.resolve(started("fast", log)), Promise.reject(new Error("port in use")), slow)).rejects.toThrow(
      "port in use",
    );
    expect(log.sort()).toEqual(["fast stopped", "slow stopped"]);
  });
});
