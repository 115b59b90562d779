import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { EventStreamCodec } from "@smithy/core/event-streams";
import { type LocalCredentials, refuseUnsigned } from "../sigv4.mjs";
import { DEFAULT_SESSION_LIMITS, PythonSession, SessionDied, type SessionLimits } from "./pythonSession.js";

/** The local code interpreter's identifier, as a CodeInterpreterCustom's id is on AWS. */
export const LOCAL_CODE_INTERPRETER_ID = "stepwise_local_interpreter-local";

export interface CodeInterpreterOptions {
  credentials: LocalCredentials;
  limits?: SessionLimits;
  /** Sessions running at once (AgentCore's quota of active sessions): more are refused with a 402. */
  maxSessions?: number;
}

/** AgentCore's limit on one session's life when StartCodeInterpreterSession names none (15 minutes). */
const DEFAULT_SESSION_SECONDS = 900;
const MAX_SESSION_SECONDS = 28_800;
/** A readFiles reply carries at most this much (AgentCore's are bounded too): the caller lists sizes first. */
const MAX_READ_BYTES = 5 * 1024 * 1024;

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const utf8 = {
  to: (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8"),
  from: (text: string) => new Uint8Array(Buffer.from(text, "utf8")),
};
const codec = new EventStreamCodec(utf8.to, utf8.from);

interface Session {
  python: PythonSession;
  timer: NodeJS.Timeout;
  createdAt: Date;
}

/**
 * Amazon Bedrock AgentCore's Code Interpreter data plane on loopback, for the same client code that
 * calls it on AWS (`@aws-sdk/client-bedrock-agentcore`): StartCodeInterpreterSession,
 * InvokeCodeInterpreter (executeCode, writeFiles, listFiles, readFiles; results as an event stream)
 * and StopCodeInterpreterSession, for requests signed with the stack's credentials. Each session is
 * a CPython process in bubblewrap (pythonSession.ts) that keeps its state until it is stopped or
 * its time runs out, as an AgentCore session's microVM does.
 */
export class LocalCodeInterpreter {
  private server?: Server;
  private readonly sessions = new Map<string, Session>();
  private readonly tokens = new Map<string, string>();
  /** Every session started, for tests and benchmarks that measure them. */
  readonly started: PythonSession[] = [];

  constructor(private readonly options: CodeInterpreterOptions) {}

  async listen(): Promise<string> {
    this.server = createServer((req, res) => void this.serve(req, res));
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.stop(id)));
    await new Promise<void>((resolve) => {
      if (!this.server) return resolve();
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  /** The sessions running now. */
  get active(): number {
    return this.sessions.size;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (await refuseUnsigned(req, body, this.options.credentials, res, "application/json")) return;
    try {
      const url = new URL(req.url ?? "/", "http://localhost");
      const match = /^\/code-interpreters\/([^/]+)\/(sessions\/start|sessions\/stop|tools\/invoke)$/.exec(url.pathname);
      if (!match) throw new ApiError(404, "ResourceNotFoundException", `no such operation: ${req.method} ${url.pathname}`);
      const [, identifier, operation] = match;
      if (decodeURIComponent(identifier ?? "") !== LOCAL_CODE_INTERPRETER_ID)
        throw new ApiError(404, "ResourceNotFoundException", `Code interpreter ${identifier} not found`);
      const input = parseJson(body);
      if (operation === "sessions/start" && req.method === "PUT") return json(res, await this.start(input));
      if (operation === "sessions/stop" && req.method === "PUT") {
        const sessionId = url.searchParams.get("sessionId") ?? "";
        if (!this.sessions.has(sessionId)) throw new ApiError(404, "ResourceNotFoundException", `Session ${sessionId} not found`);
        await this.stop(sessionId);
        return json(res, { codeInterpreterIdentifier: LOCAL_CODE_INTERPRETER_ID, sessionId, lastUpdatedAt: new Date().toISOString() });
      }
      if (operation === "tools/invoke" && req.method === "POST") {
        const sessionId = String(req.headers["x-amzn-code-interpreter-session-id"] ?? "");
        const session = this.sessions.get(sessionId);
        if (!session) throw new ApiError(404, "ResourceNotFoundException", `Session ${sessionId} not found or no longer active`);
        const result = await this.invoke(session.python, String(input.name ?? ""), (input.arguments ?? {}) as Record<string, unknown>);
        return eventStream(res, sessionId, result);
      }
      throw new ApiError(405, "ValidationException", `${req.method} is not allowed on ${url.pathname}`);
    } catch (error) {
      const known = error instanceof ApiError ? error : new ApiError(500, "InternalServerException", (error as Error).message);
      res.writeHead(known.status, { "content-type": "application/json", "x-amzn-errortype": known.type });
      res.end(JSON.stringify({ message: known.message }));
    }
  }

  private async start(input: Record<string, unknown>) {
    const token = typeof input.clientToken === "string" ? input.clientToken : undefined;
    const known = token && this.tokens.get(token);
    if (known) {
      const session = this.sessions.get(known);
      if (session)
        return { codeInterpreterIdentifier: LOCAL_CODE_INTERPRETER_ID, sessionId: known, createdAt: session.createdAt.toISOString() };
    }
    const seconds = input.sessionTimeoutSeconds === undefined ? DEFAULT_SESSION_SECONDS : Number(input.sessionTimeoutSeconds);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SESSION_SECONDS)
      throw new ApiError(400, "ValidationException", `sessionTimeoutSeconds must be between 1 and ${MAX_SESSION_SECONDS}`);
    const max = this.options.maxSessions ?? 16;
    if (this.sessions.size >= max)
      throw new ApiError(402, "ServiceQuotaExceededException", `at most ${max} code interpreter sessions may be active at once`);
    const sessionId = randomBytes(13).toString("hex").toUpperCase();
    const python = new PythonSession(sessionId, this.options.limits ?? DEFAULT_SESSION_LIMITS);
    this.started.push(python);
    const session: Session = { python, createdAt: new Date(), timer: setTimeout(() => void this.stop(sessionId), seconds * 1000) };
    session.timer.unref();
    this.sessions.set(sessionId, session);
    if (token) this.tokens.set(token, sessionId);
    // A session whose interpreter died is gone, as a failed microVM's session is.
    void python.exited.then(() => {
      if (this.sessions.get(sessionId) === session) this.forget(sessionId);
    });
    try {
      await python.ready;
    } catch (error) {
      await this.stop(sessionId);
      throw new ApiError(500, "InternalServerException", `the session could not start: ${(error as Error).message}`);
    }
    return { codeInterpreterIdentifier: LOCAL_CODE_INTERPRETER_ID, sessionId, createdAt: session.createdAt.toISOString() };
  }

  private async stop(sessionId: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.forget(sessionId);
    await session.python.stop();
  }

  private forget(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (session) clearTimeout(session.timer);
    this.sessions.delete(sessionId);
    for (const [token, id] of this.tokens) if (id === sessionId) this.tokens.delete(token);
  }

  /** One tool call on the session: the result AgentCore streams back. */
  private async invoke(python: PythonSession, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const call = async (request: Record<string, unknown>) => {
      const reply = await python.request(request).catch((error) => {
        if (error instanceof SessionDied)
          throw new ApiError(404, "ResourceNotFoundException", `the session is no longer active: ${error.why}`);
        throw error;
      });
      if (typeof reply.error === "string") return { error: reply.error };
      return reply;
    };
    const failed = (text: string) => ({ content: [{ type: "text", text }], isError: true });
    switch (name) {
      case "executeCode": {
        if (typeof args.code !== "string" || !args.code) throw new ApiError(400, "ValidationException", "executeCode needs code");
        if (args.language !== undefined && args.language !== "python")
          throw new ApiError(400, "ValidationException", `the local code interpreter runs python, not ${String(args.language)}`);
        const reply = await call({ op: "execute", code: args.code, maxChars: 1_000_000 });
        if (reply.error) return failed(String(reply.error));
        const stdout = String(reply.stdout ?? "");
        const stderr = String(reply.stderr ?? "");
        return {
          content: [{ type: "text", text: stdout + stderr }],
          structuredContent: { stdout, stderr, exitCode: reply.failed ? 1 : 0, executionTime: Number(reply.ms ?? 0) / 1000 },
          isError: Boolean(reply.failed),
        };
      }
      case "writeFiles": {
        const content = Array.isArray(args.content) ? (args.content as Record<string, unknown>[]) : [];
        const files = content.map((block) => ({
          path: String(block.path ?? ""),
          base64: typeof block.blob === "string" ? block.blob : Buffer.from(String(block.text ?? ""), "utf8").toString("base64"),
        }));
        const reply = await call({ op: "write", files });
        if (reply.error) return failed(String(reply.error));
        return { content: [{ type: "text", text: `Successfully wrote ${files.length} file(s)` }], isError: false };
      }
      case "listFiles": {
        const reply = await call({ op: "list", path: String(args.directoryPath ?? args.path ?? ".") });
        if (reply.error) return failed(String(reply.error));
        const entries = Array.isArray(reply.entries) ? (reply.entries as Record<string, unknown>[]) : [];
        const base = String(args.directoryPath ?? args.path ?? ".").replace(/\/+$/, "");
        return {
          content: entries.map((entry) => ({
            type: "resource_link",
            name: String(entry.name),
            uri: `file:///${base}/${String(entry.name)}`.replace(/^file:\/\/\/\.\//, "file:///"),
            size: Number(entry.size) || 0,
            mimeType: entry.kind === "directory" ? "inode/directory" : undefined,
            // What the entry is (file, directory, link, other) and how many names it has.
            description: `${String(entry.kind)}; links ${Number(entry.links) || 1}`,
          })),
          isError: false,
        };
      }
      case "readFiles": {
        const paths = Array.isArray(args.paths) ? args.paths.map(String) : [];
        const reply = await call({ op: "read", paths, maxBytes: MAX_READ_BYTES });
        if (reply.error) return failed(String(reply.error));
        const files = Array.isArray(reply.files) ? (reply.files as Record<string, unknown>[]) : [];
        return {
          content: files.map((file) => ({
            type: "resource",
            resource: { type: "blob", uri: `file:///${String(file.path)}`, blob: String(file.base64) },
          })),
          isError: false,
        };
      }
      case "removeFiles": {
        const paths = Array.isArray(args.paths) ? args.paths.map(String) : [];
        const reply = await call({ op: "remove", paths });
        if (reply.error) return failed(String(reply.error));
        return { content: [{ type: "text", text: `Removed ${paths.length} path(s)` }], isError: false };
      }
      default:
        throw new ApiError(400, "ValidationException", `the local code interpreter does not implement the tool ${name || "(none)"}`);
    }
  }
}

function parseJson(body: Buffer): Record<string, unknown> {
  if (!body.length) return {};
  try {
    const value = JSON.parse(body.toString("utf8"));
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value;
  } catch {}
  throw new ApiError(400, "ValidationException", "the request body is not a JSON object");
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** The result as one `result` event of an AWS event stream (application/vnd.amazon.eventstream). */
function eventStream(res: ServerResponse, sessionId: string, result: Record<string, unknown>): void {
  const message = codec.encode({
    headers: {
      ":message-type": { type: "string", value: "event" },
      ":event-type": { type: "string", value: "result" },
      ":content-type": { type: "string", value: "application/json" },
    },
    body: utf8.from(JSON.stringify(result)),
  });
  res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-code-interpreter-session-id": sessionId });
  res.end(Buffer.from(message));
}
