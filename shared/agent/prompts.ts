import type { FileLine, FileMeta } from "../ports/files.js";

import type { ToolSet } from "../ports/tools.js";

/**
 * System prompts, built from the run's truth: the tools the agents really have (built-ins, work
 * tools, the tenant's MCP tools: name, one line, read or write), the run's files (name, type, size,
 * where they came from). Stable text comes first and changing text last, so a provider's prompt
 * cache can reuse the longest prefix: the role's instructions, then the tool list (the same for
 * the whole run), then the operator's instructions (the same for the whole run, and after the part
 * every tenant shares), then the date, then the files (they change when a tool writes one).
 */
export interface PromptContext {
  /** The tools the agent — or, for the planner and router, the agents it directs — can call. */
  tools?: ToolLine[];
  files?: FileLine[];
  /** Blocks that must never be cut (newAgent's pinned memory). */
  pinned?: string[];
  /** The operator's instructions for the run (the tenant's, the saved agent's, the run's). */
  instructions?: string;
}

/** One tool as a prompt names it. */
export interface ToolLine {
  name: string;
  description: string;
  access: "read" | "write";
  /** The tool source it comes from (MCP); built-ins have none. */
  source?: string;
  /** Not offered until find_tools loads it (a catalogue over the model's tool cap). */
  searchable?: boolean;
}

/** Tools the prompt lists one line each; past them, the rest are summed up by source, names only. */
const MAX_TOOLS = 80;
/** Characters of tool names one source's summary line names; the rest are counted. */
const MAX_SOURCE_NAMES = 3_000;
const MAX_FILES = 50;

/** The tools of a set, one line each, in the set's order; those only find_tools reaches are marked. */
export function toolLines(tools: ToolSet): ToolLine[] {
  const offered = tools.listed && new Set(tools.listed.tools);
  return tools.tools.map((tool) => ({
    name: tool.name,
    description: firstLine(tool.description),
    access: tool.access,
    ...(tool.source ? { source: tool.source } : {}),
    ...(offered && !offered.has(tool) ? { searchable: true } : {}),
  }));
}

/** The files as prompts name them. */
export function fileLines(files: readonly FileMeta[]): FileLine[] {
  return files.map((f) => ({ name: f.name, contentType: f.contentType, bytes: f.bytes, origin: firstLine(f.description, 80) }));
}

/** Step contexts saved before files carried their type and size held names only. */
export const asFileLines = (files: ReadonlyArray<string | FileLine> | undefined): FileLine[] | undefined =>
  files?.map((f) => (typeof f === "string" ? { name: f, contentType: "", bytes: -1, origin: "" } : f));

function firstLine(text: string, max = 160): string {
  const line = text.trim().split(/\r?\n/)[0] ?? "";
  const sentence = /^(.*?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  return sentence.length <= max ? sentence : `${sentence.slice(0, max - 1)}…`;
}

const today = () => new Date().toISOString().slice(0, 10);

/**
 * One line per tool; a catalogue larger than that is summed up: the rest, and the tools only
 * find_tools reaches, as one line per source naming its tools (what the team can do, in short).
 */
function formatTools(tools: readonly ToolLine[]): string {
  const whole = tools.filter((t) => !t.searchable).slice(0, MAX_TOOLS);
  const shown = whole.map((t) => `- ${t.name} (${t.access}): ${t.description}`);
  const listed = new Set(whole);
  const rest = new Map<string, ToolLine[]>();
  for (const tool of tools) {
    if (listed.has(tool)) continue;
    const key = `${tool.source ?? "built in"}${tool.searchable ? ", found with find_tools" : ""}`;
    rest.set(key, [...(rest.get(key) ?? []), tool]);
  }
  for (const [key, group] of rest) {
    let names = "";
    let named = 0;
    for (const tool of group) {
      if (names.length + tool.name.length > MAX_SOURCE_NAMES) break;
      names += `${named++ ? ", " : ""}${tool.name}`;
    }
    const more = group.length > named ? ` and ${group.length - named} more not named here` : "";
    shown.push(`- from ${key}, ${group.length} tools: ${names}${more}`);
  }
  return shown.join("\n");
}

function formatFiles(files: readonly FileLine[]): string {
  const shown = files.slice(0, MAX_FILES).map((f) => {
    const facts = [f.contentType, f.bytes >= 0 ? `${f.bytes} bytes` : "", f.origin].filter(Boolean);
    return facts.length ? `- ${f.name} (${facts.join(", ")})` : `- ${f.name}`;
  });
  if (files.length > MAX_FILES) shown.push(`- … and ${files.length - MAX_FILES} more`);
  return shown.join("\n");
}

/** Heading of the tool list: the offline model reads what follows it. */
const TOOLS_HEADING = "Tools:";
const TEAM_TOOLS_HEADING = "Tools of the executor agents:";
/** Heading of the operator's instructions: the offline model reads what follows it. */
const INSTRUCTIONS_HEADING = "Instructions from the operator (follow them in everything you write):";
/** Heading of the file list: the offline model reads the names below it. */
const FILES_HEADING = "Files of this run";

function build(role: string, context: PromptContext, toolsHeading: string): string {
  const blocks = [role];
  if (context.tools?.length) blocks.push(`${toolsHeading}\n${formatTools(context.tools)}`);
  if (context.instructions) blocks.push(`${INSTRUCTIONS_HEADING}\n${context.instructions}`);
  blocks.push(`Today is ${today()}.`);
  if (context.files?.length) {
    blocks.push(`${FILES_HEADING} (read_artifact reads them; run_code gets them as files/<name>):\n${formatFiles(context.files)}`);
  } else blocks.push(`${FILES_HEADING}: none.`);
  for (const pinned of context.pinned ?? []) blocks.push(pinned);
  return blocks.join("\n\n");
}

export const routerPrompt = (context: PromptContext = {}) =>
  build(
    `You are the router of Stepwise, a team of AI agents with the tools listed below.
Decide how to handle the user's request:
- A greeting, thanks, or a question you can answer at once without tools: reply with the answer itself, as text, and call no tool.
- Otherwise call choose_mode once: react when a single agent with tools can do it in a few steps; plan_solve when it has several parts that a planner should split into tasks that run in parallel.`,
    context,
    TEAM_TOOLS_HEADING,
  );

export const plannerPrompt = (context: PromptContext = {}) =>
  build(
    `You are the planner of Stepwise, a team of AI agents.
Break the request into steps with the planning tool. Each step holds one or more tasks; the tasks of a step run at the same time, each by its own executor agent, so make them independent. Executors can call only the tools listed below: plan tasks those tools can do, and name the tool and the files a task needs. Give each step a done_when condition that its results can be checked against.
If the request lacks something you cannot plan without, call ask_user with one clear question before you plan (once there is a plan, it is refused).
After each step you receive its task results: judge them against the step's done_when with the planning tool (command "check", met true or false, with the reason). A step whose condition is not met is revised with update and runs again; it is never marked completed. Update the plan if the results call for it, and call finish when the request is fully answered. Keep plans short: two to five steps.`,
    context,
    TEAM_TOOLS_HEADING,
  );

export const executorPrompt = (context: PromptContext = {}) =>
  build(
    `You are an executor agent of Stepwise.
Solve exactly the task you are given, using your tools; do not do other steps of the plan. Tool errors are returned to you as text: correct the call and try again. When done, reply with the result in a few sentences, citing the figures and file names your tools returned.`,
    context,
    TOOLS_HEADING,
  );

export const reactPrompt = (context: PromptContext = {}) =>
  build(
    `You are Stepwise, an AI agent with tools.
Think step by step; call tools whenever they give a better answer than guessing. Tool errors come back to you as text: correct the call and try again. When you have the answer, reply with it.`,
    context,
    TOOLS_HEADING,
  );

export const summarizerPrompt = (context: PromptContext = {}) =>
  build(
    `You are the summarizer of Stepwise.
Write the final answer to the user's request from the task results you are given. Cite the figures the tasks found, and by name the files your answer relies on (a task's files follow its title); say plainly what failed or is missing. Use markdown.`,
    context,
    TOOLS_HEADING,
  );
