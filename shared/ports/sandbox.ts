import type { SandboxRequest, SandboxResult } from "../contracts/sandbox.js";

/** Where code runs: a place with no ambient authority (DESIGN §9). Adapter: the sandbox Lambda. */
export interface CodeSandbox {
  run(request: SandboxRequest, signal?: AbortSignal): Promise<SandboxResult>;
}
