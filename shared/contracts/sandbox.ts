import * as z from "zod";
import { MAX_SANDBOX_MEMORY_MB } from "./sandboxMemory.js";

/** The most code sandboxes a deployment lets one tenant run at once (`MAX_SANDBOXES_PER_TENANT`, a tenant's `maxSandboxes`). */
export const MAX_SANDBOXES_CEILING = 64;

/** A file handed to the sandbox (read-only under /sandbox/files) or made by it (/sandbox/output). */
const SandboxFile = z.object({
  name: z
    .string()
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a file name with a control character is refused
    .regex(/^[^/\\\u0000-\u001f]{1,120}$/)
    .refine((n) => n !== "." && n !== "..", "a plain file name"),
  base64: z.string(),
});
export type SandboxFile = z.infer<typeof SandboxFile>;

/** A file the code left in output/: its path there, `sub/name` for a file in a subfolder. */
export const SandboxOutput = z.object({
  name: z
    .string()
    .max(400)
    .refine((name) => name.split("/").every((part) => SandboxFile.shape.name.safeParse(part).success), "a relative path of plain names"),
  base64: z.string(),
});
export type SandboxOutput = z.infer<typeof SandboxOutput>;

/** What the sandbox function is invoked with (synchronously; Lambda's payload limit is 6 MB). */
export const SandboxRequest = z.strictObject({
  code: z.string().min(1).max(100_000),
  files: z.array(SandboxFile).max(200).default([]),
  /** Wall time for the code, from its first line; the worker is terminated at the limit. */
  timeoutMs: z.number().int().min(100).max(300_000).default(30_000),
  /** WebAssembly memory of the call: at most what the sandbox function's memory leaves (sandboxMemory.ts). */
  memoryMb: z.number().int().min(64).max(MAX_SANDBOX_MEMORY_MB).default(512),
  /** stdout and stderr are each cut to this many characters. */
  maxOutputChars: z.number().int().min(100).max(1_000_000).default(20_000),
  /**
   * The interpreter session the call belongs to (its run and agent scope): calls with the same key
   * share variables and files where the runtime keeps sessions; other runtimes start each call fresh.
   */
  session: z.string().min(1).max(300).optional(),
});
export type SandboxRequest = z.input<typeof SandboxRequest>;

export const SandboxResult = z.object({
  stdout: z.string(),
  stderr: z.string(),
  /** repr() of the last expression, as a notebook shows it. */
  value: z.string().nullable(),
  /** The traceback, or why the code was stopped (time or memory); null when it ran to the end. */
  error: z.string().nullable(),
  timedOut: z.boolean(),
  outputs: z.array(SandboxOutput),
  /** Entries of output/ left out (links, special files, past the limits), each saying why. */
  refused: z.array(z.string()).default([]),
  /** Time spent running the code, and before it (starting the interpreter, when not warm). */
  runMs: z.number(),
  startMs: z.number(),
  /** What the model should know about the session (a new one replaced a session that had ended). */
  notice: z.string().nullable().default(null),
});
export type SandboxResult = z.output<typeof SandboxResult>;
