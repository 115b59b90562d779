import { SandboxRequest, type SandboxResult } from "../../shared/contracts/sandbox.js";
import { runPython } from "../../shared/sandbox/runPython.js";

/**
 * The code sandbox's own function (its role may only write its logs): runs one piece of Python in a
 * fresh Pyodide interpreter in an isolated child process (shared/sandbox/isolatedProcess.ts), within
 * the request's limits, and keeps the next interpreter's process loaded while the container is warm.
 */
export const handler = async (event: unknown): Promise<SandboxResult> => {
  const request = SandboxRequest.parse(event);
  return runPython(request, { keepWarm: true });
};
