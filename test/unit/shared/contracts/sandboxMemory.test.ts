import { describe, expect, it } from "vitest";
import { parseSettings } from "../../../../infra/aws/config.js";
import { SandboxRequest } from "../../../../shared/contracts/sandbox.js";
import { MAX_SANDBOX_MEMORY_MB, SANDBOX_MEMORY } from "../../../../shared/contracts/sandboxMemory.js";
import { settingsFromEnv } from "../../../../shared/settings.js";

/**
 * The sandbox function's memory holds a running call (its WebAssembly memory, its JavaScript heap, its
 * Node process), the warm spare and the handler: the largest call plus the rest must fit, with room
 * left, or Lambda kills the environment mid-call.
 */
describe("the sandbox's memory budget", () => {
  const { functionMb, jsHeapMb, processBaseMb, spareMb, parentMb, marginMb } = SANDBOX_MEMORY;

  it("the largest call, its heap and process, the spare and the handler fit the function's memory with a margin", () => {
    expect(marginMb).toBeGreaterThanOrEqual(functionMb * 0.05);
    expect(MAX_SANDBOX_MEMORY_MB + jsHeapMb + processBaseMb + spareMb + parentMb + marginMb).toBeLessThanOrEqual(functionMb);
    // The default call (512 MB) fits, and so does twice it.
    expect(MAX_SANDBOX_MEMORY_MB).toBeGreaterThanOrEqual(2 * settingsFromEnv({ TABLE_NAME: "t" }).sandbox.memoryMb);
    // Lambda's memory: 128 MB to 10,240 MB.
    expect(functionMb).toBeLessThanOrEqual(10_240);
  });

  it("no setting and no request asks for more than the budget leaves", () => {
    const request = { code: "1" };
    expect(SandboxRequest.parse({ ...request, memoryMb: MAX_SANDBOX_MEMORY_MB }).memoryMb).toBe(MAX_SANDBOX_MEMORY_MB);
    expect(SandboxRequest.safeParse({ ...request, memoryMb: MAX_SANDBOX_MEMORY_MB + 1 }).success).toBe(false);
    const over = String(MAX_SANDBOX_MEMORY_MB + 1);
    expect(() => settingsFromEnv({ TABLE_NAME: "t", SANDBOX_MEMORY_MB: over })).toThrow(/SANDBOX_MEMORY_MB/);
    expect(() => parseSettings({ sandboxMemoryMb: over })).toThrow(/sandboxMemoryMb/);
    expect(
      parseSettings({ openAiBaseUrl: "https://x.example.com/v1", sandboxMemoryMb: String(MAX_SANDBOX_MEMORY_MB) }).sandboxMemoryMb,
    ).toBe(MAX_SANDBOX_MEMORY_MB);
  });
});
