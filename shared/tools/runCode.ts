import * as z from "zod";
import type { SandboxResult } from "../contracts/sandbox.js";
import { DocumentError, documentKind, sheetCsvFiles } from "../documents/documents.js";
import type { FileMeta, StoredFile } from "../ports/files.js";
import { sanitizeFilePath } from "../ports/files.js";
import type { CodeSandbox } from "../ports/sandbox.js";
import type { SandboxBound } from "../sandbox/sandboxBound.js";
import { defineTool } from "./tool.js";

export interface RunCodeLimits {
  timeoutMs: number;
  memoryMb: number;
  /** The libraries the runtime offers beyond the standard library (none: the standard library only). */
  libraries?: readonly string[];
  /** stdout and stderr are each cut to this (the agent's tool-output limit cuts the whole again). */
  maxOutputChars: number;
}

/** Lambda takes at most 6 MB per synchronous call; base64 makes bytes a third bigger. */
const MAX_SANDBOX_INPUT_BYTES = 4 * 1024 * 1024;

/**
 * What the model is told: the libraries of the runtime in use (so it does not spend a round on an
 * import that fails), whether variables live from one call to the next, where files are, the limits.
 */
export function runCodeDescription(sandbox: Pick<CodeSandbox, "keepsState">, limits: RunCodeLimits): string {
  const libraries = limits.libraries?.length
    ? `Python 3 with ${limits.libraries.join(", ")} and the standard library (no network, no pip). matplotlib draws without a display: save charts with plt.savefig('output/chart.png'). `
    : "Run Python 3 (standard library only: csv, json, statistics, math, datetime, re, …; no pandas, numpy or matplotlib; no network, no pip). ";
  const state = sandbox.keepsState
    ? "Calls of this task share one interpreter: variables, imports and files stay for the next call. "
    : "Each call starts a fresh interpreter: keep what the next call needs in output/. ";
  return (
    (limits.libraries?.length ? `Run ${libraries}` : libraries) +
    state +
    "The run's files are read-only in files/ (e.g. open('files/data.csv')); a spreadsheet is there too as one CSV per sheet beside it " +
    "(.xlsx or .xls: files/sales.xlsx → files/sales.<sheet name>.csv). Files written to output/ (subfolders too) become files of the run. " +
    "Print what you want to see; the value of a last expression is shown too. " +
    `Limits: ${limits.timeoutMs / 1000} s, ${limits.memoryMb} MB.`
  );
}

/**
 * JD Genie's code interpreter: Python over the run's files, in a sandbox with no network, host file
 * system or environment; one interpreter session per task where the runtime keeps sessions. Files
 * the code writes to output/ become files of the run. With a bound, a call runs only while it holds
 * one of its tenant's sandboxes (sandboxBound.ts).
 */
export function runCodeTool(sandbox: CodeSandbox, limits: RunCodeLimits, bound?: SandboxBound) {
  return defineTool({
    name: "run_code",
    description: runCodeDescription(sandbox, limits),
    access: "write",
    idempotent: true, // its files are put with the call's idempotency key
    grants: ["files:read", "files:write", sandbox.grant],
    parameters: z.object({
      code: z.string().min(1).max(100_000).describe("The Python program"),
      files: z.array(z.string().min(1).max(120)).max(20).optional().describe("Names of the run's files to mount (default: all)"),
    }),
    // The task is done: its interpreter session (and scratch) ends with it.
    endScope: async (runId: string, scope: string) => sandbox.end?.(sessionKey(runId, scope)),
    async run({ code, files: wanted }, { runId, scope, files, signal, idempotencyKey, progress, tenant }) {
      if (bound && !tenant) throw new Error("run_code holds one of its tenant's sandboxes, and this call came without its run's tenant");
      const available = await files.list(runId);
      const names = wanted ?? available.map((f) => f.name);
      const missing = names.filter((name) => !available.some((f) => f.name === name));
      if (missing.length) return `Error: no file named ${missing.join(", ")}. Files: ${available.map((f) => f.name).join(", ") || "none"}.`;
      // Sizes before any download: named files over the limit are refused; of all files, those that would pass it are left out, and named.
      const { mount, skipped } = withinInputLimit(names, available);
      if (wanted && skipped.length)
        return `Error: the files come to ${names.reduce((sum, name) => sum + (available.find((f) => f.name === name)?.bytes ?? 0), 0)} bytes; the sandbox takes at most ${MAX_SANDBOX_INPUT_BYTES}. Name fewer files.`;
      const stored = await Promise.all(
        mount.map(async (name) => {
          const file = await files.get(runId, name);
          if (!file) throw new Error(`the file ${name} was deleted while the code was being prepared`);
          return file;
        }),
      );
      const { sheets, unread } = await sheetsOf(stored, new Set(available.map((f) => f.name)));
      const mounted = [...stored.map((file) => ({ name: file.name, body: file.body })), ...sheets];
      const total = mounted.reduce((sum, f) => sum + f.body.byteLength, 0);
      if (total > MAX_SANDBOX_INPUT_BYTES)
        return `Error: the files come to ${total} bytes; the sandbox takes at most ${MAX_SANDBOX_INPUT_BYTES}. Name fewer files.`;
      progress?.({ type: "code", data: { part: "source", language: "python", text: code } });
      const encoded = mounted.map((f) => ({ name: f.name, base64: Buffer.from(f.body).toString("base64") }));
      const { libraries: _shown, ...limitsOfCall } = limits;
      const request = { code, files: encoded, ...limitsOfCall, session: sessionKey(runId, scope) };
      const result =
        bound && tenant
          ? await bound.holding(tenant, idempotencyKey, () => sandbox.run(request, signal), signal)
          : await sandbox.run(request, signal);
      const saved: string[] = [];
      for (const output of result.outputs) {
        const name = sanitizeFilePath(output.name);
        if (!name) continue;
        const meta = await files.put(runId, name, Buffer.from(output.base64, "base64"), {
          description: "Written by run_code",
          idempotencyKey,
        });
        saved.push(`${meta.name} (${meta.bytes} bytes)`);
      }
      const described = describeResult(result, saved, unread, skipped);
      progress?.({ type: "code", data: { part: "output", language: "python", text: described, ok: !result.error } });
      return described;
    },
  });
}

/** One interpreter session per task: the run and the agent's scope (tenants never share a run). */
const sessionKey = (runId: string, scope: string) => `${runId}/${scope}`;

/** Each workbook's sheets as CSV files beside it (a name the run already has is left to its file); what could not be read, and why. */
async function sheetsOf(
  stored: StoredFile[],
  taken: Set<string>,
): Promise<{ sheets: { name: string; body: Uint8Array }[]; unread: string[] }> {
  const sheets: { name: string; body: Uint8Array }[] = [];
  const unread: string[] = [];
  for (const file of stored) {
    if (documentKind(file.name) !== "workbook") continue;
    try {
      for (const sheet of await sheetCsvFiles(file.name, file.body)) {
        if (!taken.has(sheet.name)) sheets.push({ name: sheet.name, body: Buffer.from(sheet.csv, "utf8") });
      }
    } catch (error) {
      if (!(error instanceof DocumentError)) throw error;
      unread.push(error.message);
    }
  }
  return { sheets, unread };
}

/** The files to mount, in order, while they fit the sandbox's input limit by their stored sizes; the rest, named with their sizes. */
function withinInputLimit(names: string[], available: FileMeta[]): { mount: string[]; skipped: string[] } {
  let room = MAX_SANDBOX_INPUT_BYTES;
  const mount: string[] = [];
  const skipped: string[] = [];
  for (const name of names) {
    const bytes = available.find((f) => f.name === name)?.bytes ?? 0;
    if (bytes > room) skipped.push(`${name} (${bytes} bytes)`);
    else {
      mount.push(name);
      room -= bytes;
    }
  }
  return { mount, skipped };
}

/** The outcome as the model reads it: what was printed, the value, the error with its traceback, new files. */
function describeResult(result: SandboxResult, saved: string[], unread: string[] = [], skipped: string[] = []): string {
  const parts: string[] = unread.map((why) => `note: no CSV of its sheets: ${why}`);
  if (result.notice) parts.unshift(`note: ${result.notice}`);
  if (skipped.length)
    parts.push(
      `note: not in files/ (over the sandbox's ${MAX_SANDBOX_INPUT_BYTES} bytes of input): ${skipped.join(", ")}; read them with read_artifact`,
    );
  if (result.stdout) parts.push(`stdout:\n${result.stdout.trimEnd()}`);
  if (result.stderr) parts.push(`stderr:\n${result.stderr.trimEnd()}`);
  if (result.value !== null) parts.push(`value: ${result.value}`);
  if (result.error) parts.push(`Error:\n${result.error.trimEnd()}`);
  if (saved.length) parts.push(`files written: ${saved.join(", ")}`);
  if (result.refused.length) parts.push(`not saved from output/:\n${result.refused.map((line) => `- ${line}`).join("\n")}`);
  return parts.join("\n\n") || "(the code printed nothing)";
}
