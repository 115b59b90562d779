/**
 * `stepwise`: submit a run and follow it live, attach to a run, or print one.
 *
 *   stepwise run "<task>" [--mode auto|react|plan_solve] [--deep-think] [--session <id>]
 *                         [--approve-plan] [--approve-tools none|write|all] [--yes] [--json]
 *   stepwise watch <runId> [--yes] [--json]
 *   stepwise get <runId>
 *
 * Exit codes: 0 the run succeeded, 1 it failed / timed out / was cancelled, 2 usage error (or a
 * request the API refused as invalid, e.g. an unknown run id), 3 connection or API key error (and
 * 429 / 5xx answers), 130 detached with Ctrl-C.
 */
import { createInterface, type Interface } from "node:readline";
import { parseArgs } from "node:util";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { ResolveInterruptRequest } from "../../shared/contracts/interrupts.js";
import { TERMINAL_STATUSES } from "../../shared/contracts/run.js";
import { ApiError, ConnectionError, StepwiseClient, type CreateRunBody, type RunView } from "./client.js";
import { palette, Renderer, useColor, type Palette } from "./render.js";

export const EXIT = { ok: 0, runFailed: 1, usage: 2, connection: 3, detached: 130 } as const;

const DEFAULT_URL = "http://127.0.0.1:3000";
const MODES = ["auto", "react", "plan_solve"] as const;
const TOOL_APPROVALS = ["none", "write", "all"] as const;

const HELP = `stepwise — run tasks on a Stepwise stack and follow them live

Usage:
  stepwise run "<task>" [options]   Submit a run, show its progress, prompt for approvals, print the answer
  stepwise watch <runId> [options]  Attach to a run (replays its events, then follows it live)
  stepwise get <runId>              Print the run as JSON
  stepwise help                     Show this help

Options for run:
  --mode <auto|react|plan_solve>    How the run works (default: auto, the router decides)
  --deep-think                      Ask for deeper thinking
  --session <id>                    Continue a session (its earlier runs are the context)
  --approve-plan                    Pause for your approval before a plan is executed
  --approve-tools <none|write|all>  Pause for your approval before write (or all) tool calls
Options for run and watch:
  -y, --yes                         Approve plans and tool calls automatically (questions still need an answer)
  --json                            Print the raw events as JSON lines instead of the live view
Connection (every command):
  --url <url>                       API URL (env STEPWISE_URL, default ${DEFAULT_URL})
  --api-key <key>                   API key (env STEPWISE_API_KEY; 'npm start' prints the local one)

Ctrl-C detaches from the run; it goes on, and 'stepwise watch <runId>' attaches again.
No colours when stdout is not a terminal or NO_COLOR is set.

Exit codes: 0 succeeded · 1 failed, timed out or cancelled · 2 usage error · 3 connection or API key error · 130 detached

Examples:
  npx stepwise run "Compute 17*23 and (120/8)+2^5, then write a short report" --mode plan_solve
  npx stepwise run "Write notes.md with a summary" --approve-tools write
  npx stepwise watch run_abc123 --url https://xyz.execute-api.eu-west-1.amazonaws.com
`;

export class UsageError extends Error {}

export type Command =
  | { name: "help" }
  | { name: "run"; conn: Connection; task: string; body: CreateRunBody; yes: boolean; json: boolean }
  | { name: "watch"; conn: Connection; runId: string; yes: boolean; json: boolean }
  | { name: "get"; conn: Connection; runId: string };

export interface Connection {
  url: string;
  apiKey: string | undefined;
  /** Whether the URL came from --url (then the re-attach hint repeats it). */
  urlFromFlag: boolean;
}

const OPTIONS = {
  url: { type: "string" },
  "api-key": { type: "string" },
  mode: { type: "string" },
  "deep-think": { type: "boolean" },
  session: { type: "string" },
  "approve-plan": { type: "boolean" },
  "approve-tools": { type: "string" },
  yes: { type: "boolean", short: "y" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const ONLY_FOR: Partial<Record<keyof typeof OPTIONS, readonly string[]>> = {
  mode: ["run"],
  "deep-think": ["run"],
  session: ["run"],
  "approve-plan": ["run"],
  "approve-tools": ["run"],
  yes: ["run", "watch"],
  json: ["run", "watch"],
};

/** The command line → a command, or a UsageError that says what is wrong. */
export function parseCommandLine(argv: string[], env: NodeJS.ProcessEnv): Command {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [name, ...rest] = positionals;
  if (values.help || name === undefined || name === "help") return { name: "help" };
  if (name !== "run" && name !== "watch" && name !== "get") throw new UsageError(`Unknown command '${name}'.`);

  for (const [option, commands] of Object.entries(ONLY_FOR)) {
    if (values[option as keyof typeof values] !== undefined && !commands!.includes(name)) {
      throw new UsageError(`--${option} goes with ${commands!.map((c) => `'${c}'`).join(" or ")}, not '${name}'.`);
    }
  }
  const conn = connection(values.url, values["api-key"], env);

  if (name === "run") {
    const task = rest.join(" ").trim();
    if (!task) throw new UsageError(`'run' needs a task, e.g. stepwise run "What is 17*23?"`);
    const mode = values.mode ?? "auto";
    if (!(MODES as readonly string[]).includes(mode)) throw new UsageError(`--mode is one of ${MODES.join(", ")}; got '${mode}'.`);
    const tools = values["approve-tools"];
    if (tools !== undefined && !(TOOL_APPROVALS as readonly string[]).includes(tools)) {
      throw new UsageError(`--approve-tools is one of ${TOOL_APPROVALS.join(", ")}; got '${tools}'.`);
    }
    if (values.session !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(values.session)) {
      throw new UsageError(`--session takes a session id (1 to 64 letters, digits, '_' or '-'); got '${values.session}'.`);
    }
    const body: CreateRunBody = {
      input: task,
      mode: mode as CreateRunBody["mode"],
      ...(values["deep-think"] ? { deepThink: true } : {}),
      ...(values.session ? { sessionId: values.session } : {}),
      ...(values["approve-plan"] || (tools && tools !== "none")
        ? { approval: { plan: values["approve-plan"] === true, tools: (tools ?? "none") as "none" | "write" | "all" } }
        : {}),
    };
    return { name, conn, task, body, yes: values.yes === true, json: values.json === true };
  }

  if (rest.length !== 1 || !rest[0]) throw new UsageError(`'${name}' takes one run id, e.g. stepwise ${name} run_abc123`);
  const runId = rest[0];
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(runId)) throw new UsageError(`'${runId}' is not a run id (they look like run_abc123).`);
  if (name === "get") return { name, conn, runId };
  return { name, conn, runId, yes: values.yes === true, json: values.json === true };
}

function connection(flagUrl: string | undefined, flagKey: string | undefined, env: NodeJS.ProcessEnv): Connection {
  const raw = (flagUrl ?? env.STEPWISE_URL ?? "").trim() || DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${flagUrl !== undefined ? "--url" : "STEPWISE_URL"} is not a URL: '${raw}'.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`The API URL must be http(s), got '${raw}'.`);
  const apiKey = (flagKey ?? env.STEPWISE_API_KEY ?? "").trim() || undefined;
  return { url: raw.replace(/\/+$/, ""), apiKey, urlFromFlag: flagUrl !== undefined };
}

// ---------------------------------------------------------------------------------------------

interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
}

export async function main(argv: string[], io: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env }): Promise<number> {
  let command: Command;
  try {
    command = parseCommandLine(argv, io.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`stepwise: ${error.message}\nRun 'stepwise help' for usage.\n`);
    return EXIT.usage;
  }
  if (command.name === "help") {
    io.stdout.write(HELP);
    return EXIT.ok;
  }
  if (!command.conn.apiKey) {
    io.stderr.write(`stepwise: no API key: set STEPWISE_API_KEY or pass --api-key ('npm start' prints the local stack's key).\n`);
    return EXIT.connection;
  }
  const client = new StepwiseClient(command.conn.url, command.conn.apiKey);
  try {
    switch (command.name) {
      case "get":
        io.stdout.write(`${JSON.stringify(await client.getRun(command.runId), null, 2)}\n`);
        return EXIT.ok;
      case "run": {
        const session = new Session(client, io, command.conn, { yes: command.yes, json: command.json });
        return await session.submitAndFollow(command.body);
      }
      case "watch": {
        const session = new Session(client, io, command.conn, { yes: command.yes, json: command.json });
        return await session.attach(command.runId);
      }
    }
  } catch (error) {
    return reportError(error, io, command.conn);
  }
}

function reportError(error: unknown, io: Io, conn: Connection): number {
  if (error instanceof ApiError) {
    if (error.isAuth) {
      io.stderr.write(`stepwise: The API key was refused: set STEPWISE_API_KEY or pass --api-key. (${error.message})\n`);
      return EXIT.connection;
    }
    io.stderr.write(`stepwise: ${error.message} (HTTP ${error.status}, ${error.code})\n`);
    // A request the API found wrong is the caller's (2); throttling and server faults are the service's (3).
    return error.status >= 500 || error.status === 429 ? EXIT.connection : EXIT.usage;
  }
  if (error instanceof ConnectionError) {
    const hint = conn.url === DEFAULT_URL ? " Is the local stack running ('npm start')? Otherwise set STEPWISE_URL or pass --url." : " Check --url / STEPWISE_URL.";
    io.stderr.write(`stepwise: ${error.message}${hint}\n`);
    return EXIT.connection;
  }
  io.stderr.write(`stepwise: ${(error as Error)?.stack ?? String(error)}\n`);
  return EXIT.runFailed;
}

// ---------------------------------------------------------------------------------------------
// Following a run
// ---------------------------------------------------------------------------------------------

type OpenedInterrupt = Extract<RunEvent, { type: "interrupt.opened" }>["data"];

const TERMINAL_EXIT: Record<string, number> = {
  "run.succeeded": EXIT.ok,
  "run.failed": EXIT.runFailed,
  "run.timed_out": EXIT.runFailed,
  "run.cancelled": EXIT.runFailed,
};

class Detached extends Error {}

/** One run followed on this terminal: events in, lines and decisions out. */
class Session {
  private readonly renderer: Renderer;
  private readonly detach = new AbortController();
  private readonly queue = new EventQueue();
  private runId = "";
  private prompter: Prompter | undefined;
  private detachedByUser = false;
  /** Status lines: with the live view on stdout, on stderr when stdout carries JSON lines. */
  private readonly notes: NodeJS.WriteStream;
  /** Colours for the status lines. */
  private readonly c: Palette;
  /** Where a terminal's prompts go: stdout if it is the terminal, else stderr (stdout is data). */
  private readonly promptOut: NodeJS.WriteStream;

  constructor(
    private readonly client: StepwiseClient,
    private readonly io: Io,
    private readonly conn: Connection,
    private readonly options: { yes: boolean; json: boolean },
  ) {
    this.notes = options.json ? io.stderr : io.stdout;
    this.promptOut = !options.json && io.stdout.isTTY ? io.stdout : io.stderr;
    this.renderer = new Renderer({ color: useColor(this.notes, io.env) });
    this.c = this.renderer.c;
  }

  async submitAndFollow(body: CreateRunBody): Promise<number> {
    const created = await this.client.createRun(body);
    this.runId = created.runId;
    const { c } = this;
    this.note(`${c.bold(`Run ${created.runId}`)} submitted ${c.dim(`(session ${created.sessionId})`)}. Following it live; Ctrl-C detaches.`);
    return this.follow(created.links.stream);
  }

  async attach(runId: string): Promise<number> {
    const run = await this.client.getRun(runId);
    this.runId = run.runId;
    const { c } = this;
    this.note(`${c.bold(`Run ${run.runId}`)} is ${run.status}. ${TERMINAL_STATUSES.has(run.status) ? "Replaying its events." : "Following it live; Ctrl-C detaches."}`);
    return this.follow(run.links.stream);
  }

  private async follow(streamUrl: string): Promise<number> {
    const onSigint = () => this.onSigint();
    process.on("SIGINT", onSigint);
    const pump = this.pump(streamUrl);
    let terminal: string | undefined;
    try {
      for (;;) {
        const event = await this.queue.next();
        if (!event) break;
        if (this.detach.signal.aborted) throw new Detached();
        this.show(event);
        if (TERMINAL_EXIT[event.type] !== undefined) terminal = event.type;
        if (event.type === "interrupt.opened") await this.decide(event.data);
      }
    } catch (error) {
      if (error instanceof Detached || this.detach.signal.aborted) return this.detached();
      if (error instanceof ConnectionError) this.io.stderr.write(`The run may well go on; attach again later with: ${this.watchCommand()}\n`);
      throw error;
    } finally {
      process.off("SIGINT", onSigint);
      this.prompter?.close();
      this.detach.abort();
      await pump;
    }
    if (this.detachedByUser) return this.detached();

    let run: RunView | undefined;
    try {
      run = await this.client.getRun(this.runId);
    } catch (error) {
      if (!terminal) throw error;
    }
    if (!terminal && run) {
      // The stream ended because the run ended without a terminal event.
      if (this.options.json) this.note(`The run ended (${run.status}) without a terminal event.`);
      else this.print(this.renderer.outcome(run));
    }
    if (run && !this.options.json) this.print(this.renderer.summary(run));
    if (terminal) return TERMINAL_EXIT[terminal]!;
    return run?.status === "succeeded" ? EXIT.ok : EXIT.runFailed;
  }

  private async pump(streamUrl: string): Promise<void> {
    try {
      for await (const event of this.client.follow(this.runId, {
        streamUrl,
        signal: this.detach.signal,
        onReconnect: ({ reason, delayMs, attempt, lastEventId }) => {
          // A stream the server ended (its time limit) resumes quietly; failures are worth a word.
          if (attempt === 0) return;
          const where = lastEventId ? ` after event ${lastEventId}` : "";
          this.warn(`Stream: ${reason}; reconnecting${where} in ${(delayMs / 1000).toFixed(1)} s (attempt ${attempt}).`);
        },
        onWarning: (message) => this.warn(message),
      })) {
        this.queue.push(event);
      }
      this.queue.close();
    } catch (error) {
      this.queue.close(this.detach.signal.aborted ? new Detached() : error);
    }
  }

  private onSigint() {
    if (this.detachedByUser) process.exit(EXIT.detached); // a second Ctrl-C does not wait for anything
    this.detachedByUser = true;
    this.detach.abort();
  }

  private detached(): number {
    this.io.stderr.write(`\nDetached from run ${this.runId}; it goes on. Attach again with: ${this.watchCommand()}\n`);
    return EXIT.detached;
  }

  private watchCommand(): string {
    return `stepwise watch ${this.runId}${this.conn.urlFromFlag ? ` --url ${this.conn.url}` : ""}`;
  }

  private show(event: RunEvent) {
    if (this.options.json) this.io.stdout.write(`${JSON.stringify(event)}\n`);
    else this.print(this.renderer.event(event));
  }

  private print(lines: string[]) {
    if (lines.length > 0) this.io.stdout.write(`${lines.join("\n")}\n`);
  }

  private note(text: string) {
    this.notes.write(`${text}\n`);
  }

  private warn(text: string) {
    this.io.stderr.write(`${palette(useColor(this.io.stderr, this.io.env)).yellow("!")} ${text}\n`);
  }

  // --- interrupts -----------------------------------------------------------------------------

  /** A person's decision on an interrupt: automatic with --yes, asked on the terminal, or left to curl. */
  private async decide(interrupt: OpenedInterrupt): Promise<void> {
    if (this.queue.has((e) => e.type === "interrupt.resolved" && e.data.interruptId === interrupt.interruptId)) return;
    if (!(await this.stillPending(interrupt.interruptId))) return;
    if (this.options.json) this.notes.write(`${this.renderer.interrupt(interrupt).join("\n")}\n`);
    const { c } = this;

    if (this.options.yes && (interrupt.kind === "plan_approval" || interrupt.kind === "tool_approval")) {
      this.note(c.green(`Approved automatically (--yes).`));
      await this.submit(interrupt, { decision: "approve" });
      return;
    }
    const prompter = this.prompterFor(interrupt);
    if (!prompter) {
      this.curlHint(interrupt);
      return;
    }

    // Stop asking if someone else decides meanwhile (another terminal, curl) or the run ends.
    const asking = new AbortController();
    const onDetach = () => asking.abort();
    this.detach.signal.addEventListener("abort", onDetach);
    const stopWatching = this.queue.watch((e) => {
      if ((e.type === "interrupt.resolved" && e.data.interruptId === interrupt.interruptId) || TERMINAL_EXIT[e.type] !== undefined) asking.abort();
    });
    try {
      for (;;) {
        const request = await this.ask(interrupt, prompter, asking.signal);
        if (this.detach.signal.aborted) throw new Detached();
        if (asking.signal.aborted) {
          prompter.say(c.dim("(no longer waiting for this decision: it was made elsewhere, or the run ended)"));
          return;
        }
        if (request === undefined) {
          // stdin ended: nobody here can answer
          this.curlHint(interrupt);
          return;
        }
        if (await this.submit(interrupt, request)) return;
      }
    } finally {
      stopWatching();
      this.detach.signal.removeEventListener("abort", onDetach);
    }
  }

  /** Reads one decision; re-asks on answers it cannot use. undefined: no input, or aborted. */
  private async ask(interrupt: OpenedInterrupt, prompter: Prompter, signal: AbortSignal): Promise<ResolveInterruptRequest | undefined> {
    const c = palette(useColor(prompter.output, this.io.env));
    const say = (text: string) => prompter.say(text);
    for (;;) {
      switch (interrupt.kind) {
        case "plan_approval": {
          const answer = await prompter.ask(`${c.bold("Approve this plan?")} [y]es / [n]o (reason): `, signal);
          if (answer === undefined) return undefined;
          const yesNo = parseYesNo(answer);
          if (yesNo) return yesNo;
          say("Type y to approve, or n and a reason to reject (e.g. 'n the second step is not needed').");
          break;
        }
        case "tool_approval": {
          const answer = await prompter.ask(`${c.bold(`Approve ${interrupt.toolName ?? "the tool call"}?`)} [y]es / [n]o (reason) / [e]dit (JSON arguments): `, signal);
          if (answer === undefined) return undefined;
          const yesNo = parseYesNo(answer);
          if (yesNo) return yesNo;
          const edit = /^e(dit)?\b\s*(.*)$/is.exec(answer.trim());
          if (!edit) {
            say("Type y to approve, n and a reason to reject, or e and the new arguments as JSON.");
            break;
          }
          let text = edit[2]!.trim();
          if (!text) {
            say(c.dim(`Current arguments: ${JSON.stringify(interrupt.arguments ?? {})}`));
            const typed = await prompter.ask("New arguments (one line of JSON): ", signal);
            if (typed === undefined) return undefined;
            text = typed.trim();
          }
          const args = parseJsonObject(text);
          if (typeof args === "string") {
            say(c.red(args));
            break;
          }
          return { decision: "edit", arguments: args };
        }
        case "ask_user": {
          const answer = await prompter.ask(`${c.bold("Your answer:")} `, signal);
          if (answer === undefined) return undefined;
          if (answer.trim()) return { decision: "answer", message: answer.trim() };
          say("The answer must not be empty.");
          break;
        }
        default:
          return undefined;
      }
    }
  }

  /** Sends the decision. true: done (accepted, or no longer ours to decide); false: ask again. */
  private async submit(interrupt: OpenedInterrupt, request: ResolveInterruptRequest): Promise<boolean> {
    try {
      await this.client.resolveInterrupt(this.runId, interrupt.interruptId, request);
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.isAuth) throw error;
      const reason = error instanceof ApiError ? `${error.message} (${error.code})` : (error as Error).message;
      this.warn(`The decision was not accepted: ${reason}`);
      if (!(await this.stillPending(interrupt.interruptId))) return true;
      if (this.options.yes && interrupt.kind !== "ask_user") {
        this.curlHint(interrupt);
        return true;
      }
      return false;
    }
  }

  private async stillPending(interruptId: string): Promise<boolean> {
    try {
      const run = await this.client.getRun(this.runId);
      return run.pendingInterrupts.some((i) => i.interruptId === interruptId);
    } catch (error) {
      if (error instanceof ApiError && error.isAuth) throw error;
      return true; // cannot tell: assume it still waits
    }
  }

  /** Questions are read from stdin even with --yes; approvals only from a terminal. */
  private prompterFor(interrupt: OpenedInterrupt): Prompter | undefined {
    if (this.io.stdin.isTTY) {
      this.prompter ??= new TtyPrompter(this.io.stdin, this.promptOut, () => this.onSigint());
      return this.prompter;
    }
    if (this.options.yes && interrupt.kind === "ask_user") {
      this.prompter ??= new LinePrompter(this.io.stdin, this.notes);
      return this.prompter;
    }
    return undefined;
  }

  private curlHint(interrupt: OpenedInterrupt) {
    const examples: Record<string, string[]> = {
      plan_approval: [`{"decision":"approve"}`, `{"decision":"reject","message":"why"}`],
      tool_approval: [`{"decision":"approve"}`, `{"decision":"reject","message":"why"}`, `{"decision":"edit","arguments":${JSON.stringify(interrupt.arguments ?? {})}}`],
      ask_user: [`{"decision":"answer","message":"your answer"}`],
    };
    const url = `${this.client.url}/v1/runs/${this.runId}/interrupts/${interrupt.interruptId}`;
    const lines = [
      `Waiting for a decision on ${interrupt.interruptId} (${interrupt.kind}); this terminal cannot ask, so decide with:`,
      `  curl -X POST '${url}' -H "Authorization: Bearer $STEPWISE_API_KEY" -H 'Content-Type: application/json' \\`,
      `    -d '${(examples[interrupt.kind] ?? [`{"decision":"approve"}`])[0]!.replaceAll("'", "'\\''")}'`,
      ...(examples[interrupt.kind] ?? []).slice(1).map((body) => `  or -d '${body.replaceAll("'", "'\\''")}'`),
      `Still watching; the run goes on once it is decided.`,
    ];
    this.note(this.c.yellow(lines.join("\n")));
  }
}

/** "y", "yes" → approve; "n", "no", "n <reason>", "no: <reason>" → reject. */
export function parseYesNo(answer: string): ResolveInterruptRequest | undefined {
  const text = answer.trim();
  if (/^y(es)?$/i.test(text)) return { decision: "approve" };
  const no = /^n(o)?(?:$|[\s:,.-]+(.*)$)/is.exec(text);
  if (no) {
    const reason = no[2]?.trim();
    return reason ? { decision: "reject", message: reason } : { decision: "reject" };
  }
  return undefined;
}

/** A JSON object, or the reason it is not one. */
export function parseJsonObject(text: string): Record<string, unknown> | string {
  try {
    const value = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
    return "The arguments must be a JSON object, e.g. {\"filename\": \"notes.md\", \"content\": \"…\"}.";
  } catch (error) {
    return `That is not JSON: ${(error as Error).message}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Events in, and lines from the person
// ---------------------------------------------------------------------------------------------

/** Events from the stream reader to the consumer; the consumer may be busy with a prompt. */
class EventQueue {
  private readonly items: RunEvent[] = [];
  private waiter: (() => void) | undefined;
  private closed = false;
  private error: unknown;
  private readonly watchers = new Set<(event: RunEvent) => void>();

  push(event: RunEvent) {
    this.items.push(event);
    for (const watcher of this.watchers) watcher(event);
    this.wake();
  }

  close(error?: unknown) {
    this.closed = true;
    this.error = error;
    this.wake();
  }

  has(predicate: (event: RunEvent) => boolean): boolean {
    return this.items.some(predicate);
  }

  /** Calls `watcher` with every event pushed from now on; returns the unsubscribe. */
  watch(watcher: (event: RunEvent) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** The next event; undefined once closed and drained; throws the error it was closed with. */
  async next(): Promise<RunEvent | undefined> {
    for (;;) {
      if (this.items.length > 0) return this.items.shift();
      if (this.closed) {
        if (this.error) throw this.error;
        return undefined;
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  private wake() {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}

interface Prompter {
  readonly output: NodeJS.WriteStream;
  /** One line typed by the person; undefined when input ended or `signal` aborted. */
  ask(query: string, signal: AbortSignal): Promise<string | undefined>;
  /** A line for the person, next to the prompts. */
  say(text: string): void;
  close(): void;
}

/**
 * On a terminal: a readline interface per question, closed after it, so nothing typed between
 * questions is taken as an answer and stdin does not keep the process alive. readline puts the
 * terminal in raw mode, so Ctrl-C reaches it rather than the process: it detaches all the same.
 */
class TtyPrompter implements Prompter {
  constructor(
    private readonly input: NodeJS.ReadStream,
    readonly output: NodeJS.WriteStream,
    private readonly onSigint: () => void,
  ) {}

  say(text: string) {
    this.output.write(`${text}\n`);
  }

  ask(query: string, signal: AbortSignal): Promise<string | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    const rl = createInterface({ input: this.input, output: this.output, terminal: true });
    return new Promise<string | undefined>((resolve) => {
      let settled = false;
      const done = (answer: string | undefined) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        resolve(answer);
        rl.close();
      };
      const onAbort = () => {
        this.output.write("\n");
        done(undefined);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      rl.on("SIGINT", () => {
        done(undefined);
        this.onSigint();
      });
      rl.once("close", () => done(undefined));
      rl.question(query, (answer) => done(answer));
    });
  }

  close() {}
}

/**
 * From a pipe: one reader for the whole session (a pipe's lines may all arrive at once), lines
 * queued until asked for. The answer is echoed so the transcript reads like a terminal's.
 */
class LinePrompter implements Prompter {
  private rl: Interface | undefined;
  private readonly lines: string[] = [];
  private ended = false;
  private waiter: (() => void) | undefined;

  constructor(
    private readonly input: NodeJS.ReadStream,
    readonly output: NodeJS.WriteStream,
  ) {}

  say(text: string) {
    this.output.write(`${text}\n`);
  }

  async ask(query: string, signal: AbortSignal): Promise<string | undefined> {
    this.start();
    this.output.write(query);
    while (this.lines.length === 0 && !this.ended && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          this.waiter = undefined;
          resolve();
        };
        this.waiter = wake;
        signal.addEventListener("abort", wake, { once: true });
      });
    }
    if (signal.aborted || this.lines.length === 0) {
      this.output.write("\n");
      return undefined;
    }
    const line = this.lines.shift()!;
    this.output.write(`${line}\n`);
    return line;
  }

  close() {
    this.rl?.close();
  }

  private start() {
    if (this.rl) return;
    this.rl = createInterface({ input: this.input, terminal: false });
    this.rl.on("line", (line) => {
      this.lines.push(line);
      this.waiter?.();
    });
    this.rl.once("close", () => {
      this.ended = true;
      this.waiter?.();
    });
  }
}
