/**
 * The command line → a Command: the options, what each command accepts, and the help text.
 * Nothing here touches the network; a mistake is a UsageError that says what is wrong.
 */
import { parseArgs } from "node:util";
import type { CreateRunBody } from "../../shared/apiClient/client.js";
import { Multitask, RunStatus } from "../../shared/contracts/run.js";

/** The local stack (`npm start`). */
export const DEFAULT_URL = "http://127.0.0.1:3000";
const MODES = ["auto", "react", "plan_solve"] as const;
const TOOL_APPROVALS = ["none", "write", "all"] as const;
const MULTITASKS = Multitask.options;

export const HELP = `stepwise — run tasks on a Stepwise stack and follow them live

Usage:
  stepwise run "<task>" [options]   Submit a run, show its progress, prompt for approvals, print the answer
  stepwise watch <runId> [options]  Attach to a run (replays its events, then follows it live)
  stepwise get <runId>              Print the run as JSON (its files with download links; every task, its
                                    result previewed)
  stepwise get <runId> --task <taskId>
                                    Print one task's whole result
  stepwise files <runId>            List the run's files, each with a short-lived link that needs no key
  stepwise files <runId> --download [name]
                                    Save the run's files (or the one named) in the current folder
  stepwise list [options]           List runs, newest first
  stepwise cancel <runId>           Cancel a run
  stepwise webhooks <runId>         The run's webhook deliveries: each attempt, and when the next retry is due
  stepwise replay <runId>...        Replay ended runs on the current code from their journals (no model call, no
                                    tool): exit 0 if each is identical, 1 naming the first divergence
  stepwise replay --dir <folder>    Import each exported run in the folder (*.json, from GET /v1/runs/{id}/export)
                                    and replay it: exit 0 if each is identical, 1 naming the runs that diverged
  stepwise decide <runId> <interruptId> approve|reject|edit|answer|retry|skip|fail [text]
                                    Decide what a run waits for (edit takes --arguments '<json>')
  stepwise trace <runId> [--otlp <file> | --otlp-endpoint <url>]
                                    The run as OpenTelemetry GenAI spans (OTLP/JSON): printed, saved to a file,
                                    or sent to an OTLP/HTTP collector (its base URL; /v1/traces is added)
  stepwise open <runId>             Print the run's page in the web console
  stepwise agents                   List the saved agents (the latest version of each)
  stepwise agents get <name[@version]>
                                    Print a saved agent as JSON
  stepwise agents save <name> '<json>'
                                    Save a new version: {"mode", "instructions", "tools", "roles", "approval", "description"}
  stepwise agents delete <name>     Delete a saved agent (runs that named it are unchanged)
  stepwise help                     Show this help

Options for run:
  --mode <auto|react|plan_solve>    How the run works (default: auto, the router decides)
  --deep-think                      Ask for deeper thinking
  --session <id>                    Continue a session (its earlier runs are the context)
  --multitask <reject|enqueue|interrupt|rollback>
                                    If the session has a run in flight: refuse (default), wait
                                    for it, stop it at a safe point, or cancel it and forget its turn
  --approve-plan                    Pause for your approval before a plan is executed
  --approve-tools <none|write|all>  Pause for your approval before write (or all) tool calls
  --file <path>                     Upload a file for the run's agents to use (repeat for more)
  --agent <name[@version]>          Run as a saved agent (its mode, instructions, tools and settings)
  --instructions <text>             Instructions for this run's agents (house rules, the answer's language)
Options for list:
  --status <status>                 Only runs in this status (queued, running, awaiting_input, succeeded, …)
  --session <id>                    Only runs of this session
  --limit <n>                       How many (1 to 100, default 20)
Options for decide:
  --arguments '<json>'              The edited tool arguments (with edit)
  --message <text>                  Why (with approve, reject or edit); the answer's text may follow 'answer' instead
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
  npx stepwise run "Analyse the attached CSV and write an HTML report" --mode plan_solve --file sales.csv
  npx stepwise watch run_abc123 --url https://xyz.execute-api.eu-west-1.amazonaws.com
  npx stepwise list --status awaiting_input
  npx stepwise decide run_abc123 int_def456 reject "No files today"
`;

export class UsageError extends Error {}

export type Command =
  | { name: "help" }
  | { name: "run"; conn: Connection; task: string; body: CreateRunBody; yes: boolean; json: boolean; uploads: string[] }
  | { name: "watch"; conn: Connection; runId: string; yes: boolean; json: boolean }
  /** With `task`: that task's whole result, not the run. */
  | { name: "get"; conn: Connection; runId: string; task?: string }
  /** With `download`: save the files (all, or the one named) in the current folder. */
  | { name: "files"; conn: Connection; runId: string; download?: { name?: string } }
  | { name: "list"; conn: Connection; query: { status?: string; sessionId?: string; limit: number } }
  | { name: "cancel"; conn: Connection; runId: string }
  | { name: "webhooks"; conn: Connection; runId: string }
  | { name: "replay"; conn: Connection; runIds: string[] }
  /** `--dir`: the exported runs (GET /v1/runs/{id}/export files) in a folder, imported and replayed. */
  | { name: "replay"; conn: Connection; dir: string }
  | { name: "open"; conn: Connection; runId: string }
  | { name: "trace"; conn: Connection; runId: string; file?: string; endpoint?: string }
  | { name: "agents"; conn: Connection; action: "list" }
  | { name: "agents"; conn: Connection; action: "get" | "delete"; agent: string }
  | { name: "agents"; conn: Connection; action: "save"; agent: string; config: Record<string, unknown> }
  | {
      name: "decide";
      conn: Connection;
      runId: string;
      interruptId: string;
      body: { decision: Decision; arguments?: Record<string, unknown>; message?: string };
    };

const DECISIONS = ["approve", "reject", "edit", "answer", "retry", "skip", "fail"] as const;
type Decision = (typeof DECISIONS)[number];
const STATUSES: readonly string[] = RunStatus.options;

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
  multitask: { type: "string" },
  "approve-plan": { type: "boolean" },
  "approve-tools": { type: "string" },
  file: { type: "string", multiple: true },
  agent: { type: "string" },
  instructions: { type: "string" },
  yes: { type: "boolean", short: "y" },
  json: { type: "boolean" },
  status: { type: "string" },
  limit: { type: "string" },
  arguments: { type: "string" },
  message: { type: "string" },
  download: { type: "boolean" },
  task: { type: "string" },
  otlp: { type: "string" },
  "otlp-endpoint": { type: "string" },
  dir: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Options that belong to some commands only: given to another, they are an error, not ignored. */
const ONLY_FOR: Partial<Record<keyof typeof OPTIONS, readonly string[]>> = {
  download: ["files"],
  task: ["get"],
  dir: ["replay"],
  otlp: ["trace"],
  "otlp-endpoint": ["trace"],
  mode: ["run"],
  "deep-think": ["run"],
  session: ["run", "list"],
  multitask: ["run"],
  status: ["list"],
  limit: ["list"],
  arguments: ["decide"],
  message: ["decide"],
  "approve-plan": ["run"],
  "approve-tools": ["run"],
  file: ["run"],
  agent: ["run"],
  instructions: ["run"],
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
  if (!["run", "watch", "get", "files", "list", "cancel", "decide", "open", "agents", "trace", "replay", "webhooks"].includes(name))
    throw new UsageError(`Unknown command '${name}'.`);

  for (const [option, commands] of Object.entries(ONLY_FOR)) {
    if (values[option as keyof typeof values] !== undefined && !commands.includes(name)) {
      throw new UsageError(`--${option} goes with ${commands.map((c) => `'${c}'`).join(" or ")}, not '${name}'.`);
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
    const multitask = values.multitask;
    if (multitask !== undefined && !(MULTITASKS as readonly string[]).includes(multitask)) {
      throw new UsageError(`--multitask is one of ${MULTITASKS.join(", ")}; got '${multitask}'.`);
    }
    if (multitask !== undefined && values.session === undefined)
      throw new UsageError("--multitask says what to do when the --session has a run in flight; give --session too.");
    const body: CreateRunBody = {
      input: task,
      mode: mode as CreateRunBody["mode"],
      ...(values["deep-think"] ? { deepThink: true } : {}),
      ...(values.session ? { sessionId: values.session } : {}),
      ...(multitask ? { multitask: multitask as CreateRunBody["multitask"] } : {}),
      ...(values.agent ? { agent: values.agent } : {}),
      ...(values.instructions !== undefined ? { instructions: values.instructions } : {}),
      ...(values["approve-plan"] || (tools && tools !== "none")
        ? { approval: { plan: values["approve-plan"] === true, tools: (tools ?? "none") as "none" | "write" | "all" } }
        : {}),
    };
    return { name, conn, task, body, yes: values.yes === true, json: values.json === true, uploads: values.file ?? [] };
  }

  if (values.session !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(values.session)) {
    throw new UsageError(`--session takes a session id (1 to 64 letters, digits, '_' or '-'); got '${values.session}'.`);
  }
  if (name === "list") {
    if (rest.length > 0) throw new UsageError(`'list' takes no arguments; filter with --status and --session.`);
    if (values.status !== undefined && !STATUSES.includes(values.status))
      throw new UsageError(`--status is one of ${STATUSES.join(", ")}; got '${values.status}'.`);
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw new UsageError(`--limit is a whole number from 1 to 100; got '${values.limit}'.`);
    return {
      name,
      conn,
      query: { ...(values.status ? { status: values.status } : {}), ...(values.session ? { sessionId: values.session } : {}), limit },
    };
  }
  if (name === "decide") return decide(conn, rest, values.arguments, values.message);
  if (name === "agents") return agents(conn, rest);
  if (name === "files" && values.download) {
    if (rest.length < 1 || rest.length > 2 || !rest[0])
      throw new UsageError(
        `'files --download' takes a run id and, to save only one, a file name, e.g. stepwise files run_abc123 --download report.md`,
      );
    return { name, conn, runId: validRunId(rest[0]), download: rest[1] ? { name: rest[1] } : {} };
  }

  if (name === "replay") {
    if (values.dir !== undefined) {
      if (rest.length > 0) throw new UsageError("'replay --dir' replays the exported runs in a folder: give run ids or --dir, not both.");
      return { name, conn, dir: values.dir };
    }
    if (rest.length === 0)
      throw new UsageError("'replay' takes one or more run ids, e.g. stepwise replay run_abc123, or --dir <folder> of exported runs");
    return { name, conn, runIds: rest.map(validRunId) };
  }

  if (rest.length !== 1 || !rest[0]) throw new UsageError(`'${name}' takes one run id, e.g. stepwise ${name} run_abc123`);
  const runId = validRunId(rest[0]);
  if (name === "trace") {
    const endpoint = values["otlp-endpoint"];
    if (values.otlp !== undefined && endpoint !== undefined)
      throw new UsageError("--otlp saves the trace to a file, --otlp-endpoint sends it: give one.");
    if (endpoint !== undefined && !/^https?:\/\/[^\s]+$/.test(endpoint))
      throw new UsageError(`--otlp-endpoint is a collector's http(s) base URL, e.g. http://localhost:4318; got '${endpoint}'.`);
    return { name, conn, runId, ...(values.otlp ? { file: values.otlp } : {}), ...(endpoint ? { endpoint } : {}) };
  }
  if (name === "get" && values.task !== undefined) return { name, conn, runId, task: values.task };
  if (name === "get" || name === "files" || name === "cancel" || name === "open" || name === "webhooks")
    return { name: name as "get" | "files" | "cancel" | "open" | "webhooks", conn, runId };
  return { name: "watch", conn, runId, yes: values.yes === true, json: values.json === true };
}

function validRunId(runId: string): string {
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(runId)) throw new UsageError(`'${runId}' is not a run id (they look like run_abc123).`);
  return runId;
}

/** `decide <runId> <interruptId> <decision> [text]`: the request body the interrupt's API takes. */
function decide(conn: Connection, rest: string[], args: string | undefined, flagMessage: string | undefined): Command {
  const [runId, interruptId, decision, ...text] = rest;
  if (!runId || !interruptId || !decision)
    throw new UsageError(`'decide' takes a run id, an interrupt id and a decision, e.g. stepwise decide run_abc int_def approve`);
  if (!(DECISIONS as readonly string[]).includes(decision))
    throw new UsageError(`The decision is one of ${DECISIONS.join(", ")}; got '${decision}'.`);
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(interruptId))
    throw new UsageError(`'${interruptId}' is not an interrupt id (they look like int_abc123).`);
  const message = [flagMessage, text.join(" ").trim()].filter(Boolean).join(" ") || undefined;
  if (decision === "answer" && !message)
    throw new UsageError(`'answer' needs the answer, e.g. stepwise decide ${runId} ${interruptId} answer "Paris"`);
  let parsed: Record<string, unknown> | undefined;
  if (args !== undefined) {
    if (decision !== "edit") throw new UsageError(`--arguments goes with 'edit'.`);
    try {
      parsed = JSON.parse(args);
    } catch (error) {
      throw new UsageError(`--arguments is not JSON: ${(error as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError("--arguments must be a JSON object.");
  } else if (decision === "edit") throw new UsageError(`'edit' needs the new arguments: --arguments '{"filename": "notes.md"}'.`);
  return {
    name: "decide",
    conn,
    runId: validRunId(runId),
    interruptId,
    body: { decision: decision as Decision, ...(parsed ? { arguments: parsed } : {}), ...(message ? { message } : {}) },
  };
}

/** `agents [get|save|delete] …`: the saved agents' routes (the API checks names and configurations). */
function agents(conn: Connection, rest: string[]): Command {
  const [action = "list", agent, config, ...extra] = rest;
  if (action === "list" && !agent) return { name: "agents", conn, action };
  if ((action === "get" || action === "delete") && agent && !config) return { name: "agents", conn, action, agent };
  if (action === "save" && agent && config && extra.length === 0) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(config);
    } catch (error) {
      throw new UsageError(`The agent's configuration is not JSON: ${(error as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new UsageError("The agent's configuration must be a JSON object.");
    return { name: "agents", conn, action, agent, config: parsed as Record<string, unknown> };
  }
  throw new UsageError(`'agents' takes: (nothing) | get <name[@version]> | save <name> '<json>' | delete <name>`);
}

/** Where the API is and the key for it: flags first, then the environment. */
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
