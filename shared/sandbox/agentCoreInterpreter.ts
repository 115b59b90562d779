import { createHash, randomUUID } from "node:crypto";
import {
  type BedrockAgentCoreClient,
  type CodeInterpreterResult,
  InvokeCodeInterpreterCommand,
  StartCodeInterpreterSessionCommand,
  StopCodeInterpreterSessionCommand,
  type ToolArguments,
  type ToolName,
} from "@aws-sdk/client-bedrock-agentcore";
import { type SandboxOutput, SandboxRequest, type SandboxResult } from "../contracts/sandbox.js";
import type { CodeSandbox } from "../ports/sandbox.js";
import { OUTPUT_LIMITS } from "./collectOutputs.js";

/** The session ended under the call (stopped, timed out, or its interpreter died). */
class SessionGone extends Error {}

export interface AgentCoreInterpreterOptions {
  /** How long a session may live (AgentCore stops it then); a task's calls share it. */
  sessionSeconds: number;
}

/**
 * run_code on Amazon Bedrock AgentCore Code Interpreter: one interpreter session per task (the
 * request's `session` key: run and agent scope), so variables, imports and files live from one call
 * to the next. Each call writes the run's files into files/, runs the code, then lists output/,
 * checks every entry's kind and size against the limits before reading any, reads what passes one
 * file at a time, and removes output/ (its files are now the run's). A session that ended is
 * replaced by a fresh one, and the call's result says so. The code interpreter's own network mode
 * (sandbox) and role bound what the code can reach.
 */
export class AgentCoreInterpreter implements CodeSandbox {
  readonly keepsState = true;
  readonly grant = "interpreter:invoke" as const;
  /** Session key → the AgentCore session and how many it replaced (for the next one's client token). */
  private readonly sessions = new Map<string, { id: string; generation: number }>();
  /** Why a key's last session ended under a call (a time-out, its interpreter died): the next call's notice. */
  private readonly lost = new Map<string, string>();

  constructor(
    private readonly client: BedrockAgentCoreClient,
    private readonly interpreterId: string,
    private readonly options: AgentCoreInterpreterOptions,
  ) {}

  async run(input: SandboxRequest, signal?: AbortSignal): Promise<SandboxResult> {
    const request = SandboxRequest.parse(input);
    const key = request.session ?? `call-${randomUUID()}`;
    const began = performance.now();
    let notice: string | null = null;
    let session = this.sessions.get(key);
    if (!session) {
      session = await this.start(key, 0);
      const why = this.lost.get(key);
      this.lost.delete(key);
      if (why) notice = freshSession(why);
    }
    try {
      await this.writeInputs(session.id, request.files, signal);
    } catch (error) {
      if (!(error instanceof SessionGone)) throw error;
      session = await this.start(key, session.generation + 1);
      notice = freshSession(error.message);
      await this.writeInputs(session.id, request.files, signal);
    }
    const startMs = performance.now() - began;
    const result = await this.execute(key, session.id, request, signal);
    if (!request.session) await this.end(key);
    return { ...result, startMs, notice: notice ?? result.notice };
  }

  /** Stops the task's session: its interpreter and its files are gone. */
  async end(key: string): Promise<void> {
    const session = this.sessions.get(key);
    if (!session) return;
    this.sessions.delete(key);
    await this.client
      .send(new StopCodeInterpreterSessionCommand({ codeInterpreterIdentifier: this.interpreterId, sessionId: session.id }))
      .catch(() => undefined); // already ended: nothing to stop
  }

  private async start(key: string, generation: number) {
    // The same key starts the same session from any container (AgentCore's idempotency token).
    const clientToken = createHash("sha256").update(`${key}#${generation}`).digest("hex");
    const started = await this.client.send(
      new StartCodeInterpreterSessionCommand({
        codeInterpreterIdentifier: this.interpreterId,
        name: `stepwise-${generation}`,
        sessionTimeoutSeconds: this.options.sessionSeconds,
        clientToken,
      }),
    );
    if (!started.sessionId) throw new Error("AgentCore started a code interpreter session without an id");
    const session = { id: started.sessionId, generation };
    this.sessions.set(key, session);
    return session;
  }

  private async writeInputs(sessionId: string, files: SandboxRequest["files"], signal?: AbortSignal): Promise<void> {
    if (!files?.length) return;
    const result = await this.invoke(
      sessionId,
      "writeFiles",
      { content: files.map((file) => ({ path: `files/${file.name}`, blob: Buffer.from(file.base64, "base64") })) },
      signal,
    );
    if (result.isError) throw new Error(`the run's files could not be written into the session: ${textOf(result)}`);
  }

  private async execute(
    key: string,
    sessionId: string,
    request: ReturnType<typeof SandboxRequest.parse>,
    signal?: AbortSignal,
  ): Promise<Omit<SandboxResult, "startMs">> {
    const began = performance.now();
    const timer = AbortSignal.timeout(request.timeoutMs);
    const both = signal ? AbortSignal.any([signal, timer]) : timer;
    const cut = (text: string) =>
      text.length <= request.maxOutputChars
        ? text
        : `${text.slice(0, request.maxOutputChars)}\n[cut at ${request.maxOutputChars} characters]`;
    const failed = (error: string, extra: Partial<SandboxResult> = {}) => ({
      stdout: "",
      stderr: "",
      value: null,
      error,
      timedOut: false,
      outputs: [],
      refused: [],
      runMs: performance.now() - began,
      notice: null,
      ...extra,
    });
    let result: CodeInterpreterResult;
    try {
      result = await this.invoke(sessionId, "executeCode", { code: request.code, language: "python" }, both);
    } catch (error) {
      if (timer.aborted && !signal?.aborted) {
        await this.end(key);
        this.lost.set(key, "the code before ran past the time limit");
        return failed(
          `TimeoutError: the code ran for more than ${request.timeoutMs / 1000} s and was stopped. Its interpreter session was stopped too: the next call starts a new one (variables are lost; the run's files stay).`,
          { timedOut: true },
        );
      }
      if (error instanceof SessionGone) {
        this.sessions.delete(key);
        this.lost.set(key, `it ended while code ran: ${error.message}`);
        return failed(
          `SandboxError: the interpreter session ended while the code ran (${error.message}); it may have passed its memory limit. The next call starts a new session: variables are lost, the run's files stay.`,
        );
      }
      throw error;
    }
    const structured = result.structuredContent ?? {};
    const stdout = structured.stdout ?? (result.isError ? "" : textOf(result));
    const stderr = structured.stderr ?? (result.isError ? textOf(result) : "");
    const collected = await this.collectOutputs(sessionId, signal).catch((error) => {
      if (error instanceof SessionGone) this.sessions.delete(key);
      return { outputs: [], refused: [`output/: could not be read (${(error as Error).message})`] };
    });
    return {
      stdout: cut(result.isError ? "" : stdout),
      stderr: result.isError ? "" : cut(stderr),
      value: null,
      error: result.isError ? cut(stderr || stdout || "the code failed") : null,
      timedOut: false,
      outputs: collected.outputs,
      refused: collected.refused,
      runMs: structured.executionTime !== undefined ? structured.executionTime * 1000 : performance.now() - began,
      notice: null,
    };
  }

  /**
   * output/ as the session holds it: every entry's kind and size are checked against the limits
   * before anything is read; what passes is read one file at a time and checked again; then
   * output/ is emptied, so the next call's outputs are its own.
   */
  private async collectOutputs(sessionId: string, signal?: AbortSignal): Promise<{ outputs: SandboxOutput[]; refused: string[] }> {
    const outputs: SandboxOutput[] = [];
    const refused: string[] = [];
    const wanted: { path: string; size: number }[] = [];
    const topLevel: string[] = [];
    let bytes = 0;
    const walk = async (folder: string, prefix: string, depth: number) => {
      const listing = await this.invoke(sessionId, "listFiles", { directoryPath: folder }, signal);
      if (listing.isError) return;
      const entries = (listing.content ?? []).filter((block) => block.type === "resource_link" && block.name);
      for (const entry of entries.sort((a, b) => ((a.name ?? "") < (b.name ?? "") ? -1 : 1))) {
        const shown = `${prefix}${entry.name}`;
        if (depth === 0) topLevel.push(`output/${entry.name}`);
        const directory = entry.mimeType === "inode/directory" || entry.description?.startsWith("directory");
        if (directory) {
          if (depth >= OUTPUT_LIMITS.depth) refused.push(`${shown}/: folders nest deeper than ${OUTPUT_LIMITS.depth} levels, not saved`);
          else await walk(`${folder}/${entry.name}`, `${shown}/`, depth + 1);
          continue;
        }
        const kind = entry.description?.split(";")[0];
        const size = entry.size ?? 0;
        if (kind && kind !== "file") refused.push(`${shown}: ${kind === "link" ? "a symbolic link" : "not a regular file"}, not saved`);
        else if (/links ([2-9]|\d{2,})/.test(entry.description ?? "")) refused.push(`${shown}: a hard link, not saved`);
        else if (wanted.length >= OUTPUT_LIMITS.files) refused.push(`${shown}: more than ${OUTPUT_LIMITS.files} files, not saved`);
        else if (bytes + size > OUTPUT_LIMITS.bytes)
          refused.push(`${shown}: the outputs would pass ${OUTPUT_LIMITS.bytes} bytes, not saved`);
        else {
          bytes += size;
          wanted.push({ path: shown, size });
        }
      }
    };
    await walk("output", "", 0);
    for (const file of wanted) {
      const read = await this.invoke(sessionId, "readFiles", { paths: [`output/${file.path}`] }, signal);
      const blob = read.content?.find((block) => block.type === "resource")?.resource;
      const body = blob?.blob ?? (blob?.text !== undefined ? Buffer.from(blob.text, "utf8") : undefined);
      if (read.isError || !body || body.byteLength !== file.size) refused.push(`${file.path}: changed while it was read, not saved`);
      else outputs.push({ name: file.path, base64: Buffer.from(body).toString("base64") });
    }
    if (topLevel.length) await this.invoke(sessionId, "removeFiles", { paths: topLevel }, signal).catch(() => undefined);
    return { outputs, refused };
  }

  /** One tool call; its event stream read to its result. A session that is no longer there is SessionGone. */
  private async invoke(sessionId: string, name: ToolName, args: ToolArguments, signal?: AbortSignal): Promise<CodeInterpreterResult> {
    try {
      const response = await this.client.send(
        new InvokeCodeInterpreterCommand({ codeInterpreterIdentifier: this.interpreterId, sessionId, name, arguments: args }),
        { abortSignal: signal },
      );
      for await (const event of response.stream ?? []) {
        if (event.result) return event.result;
        const problem = Object.values(event).find((value) => value && typeof value === "object") as { message?: string } | undefined;
        throw Object.assign(new Error(problem?.message ?? "the code interpreter failed"), { name: Object.keys(event)[0] });
      }
      throw new Error("the code interpreter answered without a result");
    } catch (error) {
      const name = (error as Error).name;
      if (/ResourceNotFound/i.test(name)) throw new SessionGone((error as Error).message);
      throw error;
    }
  }
}

const freshSession = (why: string) =>
  `A new interpreter session: the task's previous one had ended (${why}). Variables and imports from earlier calls are gone; the run's files are in files/ again.`;

function textOf(result: CodeInterpreterResult): string {
  return (result.content ?? [])
    .map((block) => block.text ?? "")
    .join("")
    .trim();
}
