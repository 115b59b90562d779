/**
 * `stepwise`: submit a run and follow it live, attach to a run, or print one.
 *
 *   stepwise run "<task>" [--mode auto|react|plan_solve] [--deep-think] [--session <id>]
 *                         [--approve-plan] [--approve-tools none|write|all] [--yes] [--json]
 *   stepwise watch <runId> [--yes] [--json]
 *   stepwise get <runId> [--task <taskId>]
 *   stepwise files <runId> [--download [name]]
 *   stepwise list [--status <s>] [--session <id>] [--limit <n>]
 *   stepwise cancel <runId>
 *   stepwise webhooks <runId>
 *   stepwise replay <runId>... | --dir <folder>
 *   stepwise decide <runId> <interruptId> approve|reject|edit|answer [text] [--arguments <json>] [--message <text>]
 *   stepwise open <runId>
 *   stepwise agents [get <name[@version]> | save <name> '<json>' | delete <name>]
 *
 * Exit codes (exitCodes.ts): 0 the run succeeded, 1 it failed / timed out / was cancelled, 2 usage
 * error (or a request the API refused as invalid, e.g. an unknown run id), 3 connection or API key
 * error (and 429 / 5xx answers), 130 detached with Ctrl-C.
 *
 * This file dispatches and turns errors into exit codes; args.ts reads the command line,
 * follow.ts follows a run (`run`, `watch`), approvals.ts gets the decisions its interrupts wait for.
 */

import { writeFile } from "node:fs/promises";
import { StepwiseClient } from "../../shared/apiClient/client.js";
import { ApiError, ConnectionError } from "../../shared/apiClient/errors.js";
import { type Command, type Connection, DEFAULT_URL, HELP, parseCommandLine, UsageError } from "./args.js";
import { EXIT } from "./exitCodes.js";
import { downloadFiles, printFiles, uploadAll, withDownloadLinks } from "./files.js";
import { type Io, Session } from "./follow.js";
import { runList, webhookDeliveries } from "./render.js";
import { replayFolder, replayRuns } from "./replay.js";

/** Runs one command line; resolves to the exit code (stepwise.mjs exits with it). */
export async function main(
  argv: string[],
  io: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env },
): Promise<number> {
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
  if (command.name === "open") {
    // The console is served by the API at its own origin; the key is typed into the page, never put in a URL.
    io.stdout.write(`${command.conn.url}/#/runs/${encodeURIComponent(command.runId)}\n`);
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
        io.stdout.write(await getCommand(client, command));
        return EXIT.ok;
      case "files":
        if (command.download) await downloadFiles(client, command.runId, command.download.name, process.cwd(), io);
        else io.stdout.write(await printFiles(client, await client.listFiles(command.runId)));
        return EXIT.ok;
      case "run": {
        const session = new Session(client, io, command.conn, { yes: command.yes, json: command.json });
        const files = await uploadAll(client, command.uploads, io);
        return await session.submitAndFollow(files.length ? { ...command.body, files } : command.body);
      }
      case "watch": {
        const session = new Session(client, io, command.conn, { yes: command.yes, json: command.json });
        return await session.attach(command.runId);
      }
      case "list":
        io.stdout.write(runList(await client.listRuns(command.query)));
        return EXIT.ok;
      case "trace":
        io.stdout.write(await traceCommand(client, command));
        return EXIT.ok;
      case "webhooks":
        io.stdout.write(webhookDeliveries(await client.listWebhooks(command.runId)));
        return EXIT.ok;
      case "cancel":
        await client.cancelRun(command.runId);
        io.stdout.write(`Cancelled ${command.runId}.\n`);
        return EXIT.ok;
      case "replay":
        return "dir" in command ? await replayFolder(client, command.dir, io) : await replayRuns(client, command.runIds, io);
      case "agents":
        io.stdout.write(await agentsCommand(client, command));
        return EXIT.ok;
      case "decide": {
        const interrupt = await client.resolveInterrupt(command.runId, command.interruptId, command.body);
        io.stdout.write(
          `${command.body.decision} sent for ${interrupt.interruptId} (${interrupt.kind}); the run goes on. Follow it: stepwise watch ${command.runId}\n`,
        );
        return EXIT.ok;
      }
    }
  } catch (error) {
    return reportError(error, io, command.conn);
  }
}

/**
 * `stepwise get`: the run as JSON with every task (the view holds a page; the others are read
 * after it), each result previewed; with --task, that task's whole result as it is.
 */
async function getCommand(client: StepwiseClient, command: Extract<Command, { name: "get" }>): Promise<string> {
  if (command.task !== undefined) {
    const result = await client.taskResult(command.runId, command.task);
    return result.endsWith("\n") ? result : `${result}\n`;
  }
  const run = await client.getRun(command.runId);
  const whole = { ...run, tasks: await client.allTasks(run), nextTasksCursor: null };
  return `${JSON.stringify(withDownloadLinks(whole, client.url), null, 2)}\n`;
}

/** The saved agents: a list of one line each, or one agent as JSON. */
/**
 * `stepwise trace`: the run's OTLP/JSON trace printed, saved to a file, or POSTed to a collector's
 * OTLP/HTTP traces endpoint (`<base>/v1/traces`, JSON encoding), where Langfuse, Phoenix or any
 * OpenTelemetry collector reads it.
 */
async function traceCommand(client: StepwiseClient, command: Extract<Command, { name: "trace" }>): Promise<string> {
  const trace = await client.getTrace(command.runId);
  const text = JSON.stringify(trace);
  if (command.file) {
    await writeFile(command.file, `${text}\n`);
    return `Saved the trace of ${command.runId} to ${command.file} (OTLP/JSON).\n`;
  }
  if (!command.endpoint) return `${JSON.stringify(trace, null, 2)}\n`;
  const url = `${command.endpoint.replace(/\/+$/, "")}/v1/traces`;
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: text });
  if (!response.ok) throw new Error(`The collector at ${url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  return `Sent the trace of ${command.runId} to ${url}.\n`;
}

async function agentsCommand(client: StepwiseClient, command: Extract<Command, { name: "agents" }>): Promise<string> {
  if (command.action === "list") {
    const { agents } = await client.listAgents();
    if (agents.length === 0) return 'No saved agents. Save one: stepwise agents save <name> \'{"mode": "react"}\'\n';
    return agents
      .map(
        (a) =>
          `${a.name}@${a.version}  ${a.mode ?? "auto"}  ${a.tools ? `tools: ${a.tools.join(", ")}` : "all tools"}${a.description ? `  ${a.description}` : ""}\n`,
      )
      .join("");
  }
  if (command.action === "delete") {
    await client.deleteAgent(command.agent);
    return `Deleted ${command.agent}.\n`;
  }
  const agent = command.action === "save" ? await client.saveAgent(command.agent, command.config) : await client.getAgent(command.agent);
  return `${JSON.stringify(agent, null, 2)}\n`;
}

/** Says on stderr what went wrong, and picks the exit code for it. */
function reportError(error: unknown, io: Io, conn: Connection): number {
  if (error instanceof UsageError) {
    io.stderr.write(`stepwise: ${error.message}\n`);
    return EXIT.usage;
  }
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
    const hint =
      conn.url === DEFAULT_URL
        ? " Is the local stack running ('npm start')? Otherwise set STEPWISE_URL or pass --url."
        : " Check --url / STEPWISE_URL.";
    io.stderr.write(`stepwise: ${error.message}${hint}\n`);
    return EXIT.connection;
  }
  io.stderr.write(`stepwise: ${(error as Error)?.stack ?? String(error)}\n`);
  return EXIT.runFailed;
}
