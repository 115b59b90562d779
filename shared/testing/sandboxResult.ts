import type { SandboxResult } from "../contracts/sandbox.js";

/** A sandbox call's result for a test: nothing printed, nothing left in output/, unless `over` says so. */
export const sandboxResult = (over: Partial<SandboxResult> = {}): SandboxResult => ({
  stdout: "",
  stderr: "",
  value: null,
  error: null,
  timedOut: false,
  outputs: [],
  refused: [],
  runMs: 1,
  startMs: 1,
  notice: null,
  ...over,
});
