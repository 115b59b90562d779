import { z } from "zod";
import { sanitizeFilePath } from "../ports/files.js";
import type { CodeSandbox } from "../ports/sandbox.js";
import type { SandboxResult } from "../contracts/sandbox.js";
import { defineTool } from "./tool.js";

export interface RunCodeLimits {
  timeoutMs: number;
  memoryMb: number;
  /** stdout and stderr are each cut to this (the agent's tool-output limit cuts the whole again). */
  maxOutputChars: number;
}

/** Lambda takes at most 6 MB per synchronous call; base64 makes bytes a third bigger. */
export const MAX_SANDBOX_INPUT_BYTES = 4 * 1024 * 1024;

/**
 * JD Genie's code interpreter: Python (standard library) over the run's files, in a sandbox with no
 * network, host file system or environment. Files the code writes to output/ become files of the run.
 */
export function runCodeTool(sandbox: CodeSandbox, limits: RunCodeLimits) {
  return defineTool({
    name: "run_code",
    description:
      "Run Python 3 (standard library: csv, json, statistics, math, datetime, re, …; no network, no pip). " +
      "The run's files are read-only in files/ (e.g. open('files/data.csv')); files written to output/ (subfolders too) become files of the run. " +
      "Print what you want to see; the value of a last expression is shown too. " +
      `Limits: ${limits.timeoutMs / 1000} s, ${limits.memoryMb} MB.`,
    access: "write",
    grants: ["files:read", "files:write", "sandbox:invoke"],
    parameters: z.object({
      code: z.string().min(1).max(100_000).describe("The Python program"),
      files: z.array(z.string().min(1).max(120)).max(20).optional().describe("Names of the run's files to mount (default: all)"),
    }),
    async run({ code, files: wanted }, { runId, files, signal, idempotencyKey }) {
      const available = await files.list(runId);
      const names = wanted ?? available.map((f) => f.name);
      const missing = names.filter((name) => !available.some((f) => f.name === name));
      if (missing.length) return `Error: no file named ${missing.join(", ")}. Files: ${available.map((f) => f.name).join(", ") || "none"}.`;
      const total = available.filter((f) => names.includes(f.name)).reduce((sum, f) => sum + f.bytes, 0);
      if (total > MAX_SANDBOX_INPUT_BYTES) return `Error: the files come to ${total} bytes; the sandbox takes at most ${MAX_SANDBOX_INPUT_BYTES}. Name fewer files.`;
      const mounted = await Promise.all(
        names.map(async (name) => ({ name, base64: Buffer.from((await files.get(runId, name))!.body).toString("base64") })),
      );
      const result = await sandbox.run({ code, files: mounted, ...limits }, signal);
      const saved: string[] = [];
      for (const output of result.outputs) {
        const name = sanitizeFilePath(output.name);
        if (!name) continue;
        const meta = await files.put(runId, name, Buffer.from(output.base64, "base64"), { description: "Written by run_code", idempotencyKey });
        saved.push(`${meta.name} (${meta.bytes} bytes)`);
      }
      return describeResult(result, saved);
    },
  });
}

/** The outcome as the model reads it: what was printed, the value, the error with its traceback, new files. */
function describeResult(result: SandboxResult, saved: string[]): string {
  const parts: string[] = [];
  if (result.stdout) parts.push(`stdout:\n${result.stdout.trimEnd()}`);
  if (result.stderr) parts.push(`stderr:\n${result.stderr.trimEnd()}`);
  if (result.value !== null) parts.push(`value: ${result.value}`);
  if (result.error) parts.push(`Error:\n${result.error.trimEnd()}`);
  if (saved.length) parts.push(`files written: ${saved.join(", ")}`);
  if (result.refused.length) parts.push(`not saved from output/:\n${result.refused.map((line) => `- ${line}`).join("\n")}`);
  return parts.join("\n\n") || "(the code printed nothing)";
}
