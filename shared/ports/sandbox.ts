import type { SandboxRequest, SandboxResult } from "../contracts/sandbox.js";
import type { ToolGrant } from "../contracts/toolGrants.js";

/**
 * Where code runs: a place with no ambient authority. Adapters: AgentCore Code Interpreter (a
 * session per task; locally its emulation, CPython in bubblewrap) and the sandbox Lambda (Pyodide,
 * a fresh interpreter per call).
 */
export interface CodeSandbox {
  /** Whether calls with the same `session` key share variables and imports. */
  readonly keepsState: boolean;
  /** What calling it needs from AWS (the stack grants it to the agents). */
  readonly grant: ToolGrant;
  run(request: SandboxRequest, signal?: AbortSignal): Promise<SandboxResult>;
  /** Ends a session (its task is done): its interpreter and scratch are gone. */
  end?(session: string): Promise<void>;
}
