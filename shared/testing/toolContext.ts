import type { ToolContext } from "../ports/tools.js";
import { MemoryFileStore } from "./memoryFiles.js";

/** A tool context over in-memory files, for calling a tool directly in a unit test. */
export function testToolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return { runId: "run_test", scope: "test", idempotencyKey: "run_test:test:0:call_1", files: new MemoryFileStore(), ...overrides };
}
