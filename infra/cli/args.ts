/**
 * The command line → a Command: the options, what each command accepts, and the help text.
 * Nothing here touches the network; a mistake is a UsageError that says what is wrong.
 */
import { parseArgs } from "node:util";
import type { CreateRunBody } from "./client.js";

/** The local stack (`npm start`). */
export const DEFAULT_URL = "http://127.0.0.1:3000";
const MODES = ["auto", "react", "plan_solve"] as const;
const TOOL_APPROVALS = ["none", "write", "all"] as const;

export const HELP = `stepwise — run tasks on a Stepwise stack and follow them live

Usage:
  stepwise run "<task>" [options]   Submit a run, show its progress, prompt for approvals, print the answer
  stepwise watch <runId> [options]  Attach to a run (replays its events, then follows it live)
  stepwise get <runId>              Print the run as JSON (its files with download links)
  stepwise files <runId>            List the run's files with download links
  stepwise help                     Show this help

Options for run:
  --mode <auto|react|plan_solve>    How the run works (default: auto, the router decides)
  --deep-think                      Ask for deeper thinking
  --session <id>                    Continue a session (its earlier runs are the context)
  --approve-plan                    Pause for your approval before a plan is executed
  --approve-tools <none|write|all>  Pause for your approval before write (or all) tool calls
  --file <path>                     Upload a file for the run's agents to use (repeat for more)
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
`;

export class UsageError extends Error {}

export type Command =
  | { name: "help" }
  | { name: "run"; conn: Connection; task: string; body: CreateRunBody; yes: boolean; json: boolean; uploads: string[] }
  | { name: "watch"; conn: Connection; runId: string; yes: boolean; json: boolean }
  | { name: "get"; conn: Connection; runId: string }
  | { name: "files"; conn: Connection; runId: string };

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
  file: { type: "string", multiple: true },
  yes: { type: "boolean", short: "y" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Options that belong to some commands only: given to another, they are an error, not ignored. */
const ONLY_FOR: Partial<Record<keyof typeof OPTIONS, readonly string[]>> = {
  mode: ["run"],
  "deep-think": ["run"],
  session: ["run"],
  "approve-plan": ["run"],
  "approve-tools": ["run"],
  file: ["run"],
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
  if (name !== "run" && name !== "watch" && name !== "get" && name !== "files") throw new UsageError(`Unknown command '${name}'.`);

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
    return { name, conn, task, body, yes: values.yes === true, json: values.json === true, uploads: values.file ?? [] };
  }

  if (rest.length !== 1 || !rest[0]) throw new UsageError(`'${name}' takes one run id, e.g. stepwise ${name} run_abc123`);
  const runId = rest[0];
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(runId)) throw new UsageError(`'${runId}' is not a run id (they look like run_abc123).`);
  if (name === "get" || name === "files") return { name, conn, runId };
  return { name, conn, runId, yes: values.yes === true, json: values.json === true };
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
