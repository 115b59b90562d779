// Reading helpers over a chat transcript: who said what, and the labelled lines
// ("Request:", "Your task:", "Files:", "- result") the orchestrator writes.

import { TOOL_IMAGES_INTRO } from "../../shared/llm/toolImages.js";
import type { ChatMessage, MessageContent, ToolSpec } from "./types.js";

export function textOf(content: MessageContent): string {
  if (typeof content === "string") return content;
  if (!content) return "";
  return content.map((part) => part.text ?? "").join("");
}

/** A user message that shows the images a round's tools returned: part of those results, never a request. */
export const isToolImages = (message: ChatMessage | undefined): boolean =>
  message?.role === "user" && textOf(message.content).startsWith(TOOL_IMAGES_INTRO);

function lastIndexOfRole(messages: readonly ChatMessage[], role: string): number {
  return messages.findLastIndex((message) => message.role === role && !isToolImages(message));
}

/** Where the last request is (a user message, not one showing tool images); -1 when there is none. */
export const lastRequestIndex = (messages: readonly ChatMessage[]): number => lastIndexOfRole(messages, "user");

/** The messages showing tool images since the last request (the person's or the orchestrator's). */
export function toolImagesSinceLastUser(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.slice(lastIndexOfRole(messages, "user") + 1).filter(isToolImages);
}

export function firstUserText(messages: readonly ChatMessage[]): string {
  return textOf(messages.find((message) => message.role === "user")?.content);
}

export function lastUserText(messages: readonly ChatMessage[]): string {
  return textOf(messages[lastIndexOfRole(messages, "user")]?.content);
}

/** Contents of the tool results the model has not answered yet (those after the last user message). */
export function toolResultsSinceLastUser(messages: readonly ChatMessage[]): string[] {
  return messages
    .slice(lastIndexOfRole(messages, "user") + 1)
    .filter((message) => message.role === "tool")
    .map((message) => textOf(message.content));
}

/**
 * Text after the first line that starts with `label`. When the label stands alone
 * on its line it heads a block, so the lines below it up to a blank line are taken.
 */
export function labelledText(text: string, label: string): string | undefined {
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  const index = lines.findIndex((line) => line.toLowerCase().startsWith(label.toLowerCase()));
  if (index < 0) return undefined;
  const sameLine = lines[index].slice(label.length).trim();
  if (sameLine) return sameLine;
  const blockEnd = lines.findIndex((line, i) => i > index && line === "");
  const block = lines.slice(index + 1, blockEnd < 0 ? undefined : blockEnd).join("\n");
  return block || undefined;
}

/** The user's request: the text of a `Request:` line if there is one, else the whole message. */
export function requestIn(text: string): string {
  return labelledText(text, "Request:") ?? text.trim();
}

/**
 * An executor's (or ReAct agent's) last user message, what it is asked to do (its `Your task:` line,
 * else the request) and the run's request (its `Request:` line, else the task).
 */
export function taskOf(messages: readonly ChatMessage[]): { userText: string; task: string; request: string } {
  const userText = lastUserText(messages);
  const task = labelledText(userText, "Your task:") ?? requestIn(userText);
  return { userText, task, request: labelledText(userText, "Request:") ?? task };
}

/** Lines starting with "- ": the orchestrator lists task results that way (indented ones are plan tasks). */
export function bulletLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .filter((line) => line.startsWith("- "))
    .map((line) => line.trim());
}

export function offeredToolNames(tools: readonly ToolSpec[] | undefined): Set<string> {
  const names = (tools ?? []).flatMap((tool) => (tool.type === "function" && tool.function ? [tool.function.name] : []));
  return new Set(names);
}

/** Every tool call assistants made so far, with arguments parsed (or undefined when not JSON). */
export function assistantToolCalls(messages: readonly ChatMessage[]): Array<{ name: string; arguments: unknown }> {
  return messages
    .filter((message) => message.role === "assistant")
    .flatMap((message) => message.tool_calls ?? [])
    .flatMap((call) => (call.function ? [{ name: call.function.name, arguments: parseJson(call.function.arguments) }] : []));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function isFailure(toolResult: string): boolean {
  return /^\s*(Error|Rejected)/i.test(toolResult);
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

export function cut(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

/** The system prompt's text (all system messages). */
export function systemText(messages: readonly ChatMessage[]): string {
  return messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => textOf(m.content))
    .join("\n\n");
}

/** The "- item" lines of the block under a heading line that starts with `heading` (up to a blank line). */
function listUnder(text: string, heading: RegExp): string[] {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((line) => heading.test(line));
  if (start < 0) return [];
  const items: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith("- ")) break;
    items.push(line.slice(2));
  }
  return items;
}

/**
 * The tools the system prompt names ("- name (read): what it does"): for a planner or router, the
 * tools of the agents it directs; for an agent, its own (which it is also sent as `tools`).
 */
export function listedTools(messages: readonly ChatMessage[]): Set<string> {
  const names = listUnder(systemText(messages), /^Tools( of the executor agents)?:\s*$/).flatMap((line) => {
    // A large catalogue is summed up by source, names only: "- from bulk, 71 tools: bulk__a, bulk__b".
    const summed = /^from [^:]*, \d+ tools: (.*)$/.exec(line)?.[1];
    if (summed !== undefined) return summed.replace(/ and \d+ more not named here$/, "").split(", ");
    return [/^([\w.-]+) \(/.exec(line)?.[1]];
  });
  return new Set(names.filter((name): name is string => Boolean(name)));
}

/** The run's files the system prompt names ("- sales.csv (text/csv, 95 bytes, Uploaded)"). */
export function listedFiles(messages: readonly ChatMessage[]): string[] {
  return listUnder(systemText(messages), /^Files of this run\b.*:\s*$/).map((line) => line.replace(/ \([^()]*\)$/, "").trim());
}
