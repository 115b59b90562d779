import * as z from "zod";

/**
 * JSON contract mode (the newAgent seed) for models without native tool calling: the model replies
 * with one JSON object, either tool calls or the final answer. A reply that cannot be used gets the
 * parse error back as a correction; this many failures in a row end the run with an error.
 */
export const MAX_CONSECUTIVE_FAILURES = 3;

export interface ContractTool {
  name: string;
  description: string;
  /** JSON schema of the tool's arguments object. */
  parameters: Record<string, unknown>;
}

export interface ContractToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export type ContractReply = { toolCalls: ContractToolCall[] } | { answer: string };
export type ContractParseResult = { ok: true; value: ContractReply } | { ok: false; error: string };

const SHAPES = '{"tool_calls": [{"name": "<tool name>", "arguments": {...}}]} or {"answer": "<your final answer>"}';

export function contractPrompt(tools: ContractTool[]): string {
  const answerOnly = 'Reply with exactly one JSON object and nothing else: {"answer": "<your final answer>"}.';
  if (tools.length === 0) return answerOnly;
  const toolList = tools.map((tool) => `- ${tool.name}: ${tool.description}\n  arguments schema: ${JSON.stringify(tool.parameters)}`);
  return [
    "You call tools by replying with JSON. Every reply is exactly one JSON object and nothing else: no text before or after it, no Markdown.",
    "",
    "To call tools:",
    '{"tool_calls": [{"name": "<tool name>", "arguments": {<arguments that match the tool\'s schema>}}]}',
    "Several calls in one reply run at the same time, so list several only when they do not depend on each other. You then receive the results and reply again.",
    "",
    "When you are done, give the final answer:",
    '{"answer": "<your final answer>"}',
    "",
    "Tools:",
    ...toolList,
  ].join("\n");
}

// The wire contract. Leniencies: "arguments" may be omitted (no arguments) or sent as a JSON-encoded
// string; other top-level keys (a "thought", say) are ignored.
const ToolArguments = z.preprocess(
  (value) => (value === undefined ? {} : typeof value === "string" ? parseJsonOrKeep(value) : value),
  z.record(z.string(), z.unknown(), { error: "must be a JSON object of the tool's arguments" }),
);
const ToolCallsReply = z.object({
  tool_calls: z
    .array(
      z.object({
        name: z.string({ error: "must be the tool's name, a string" }).min(1, { error: "must not be empty" }),
        arguments: ToolArguments,
      }),
      {
        error: "must be an array of calls",
      },
    )
    .min(1, { error: "must list at least one call" }),
});
const AnswerReply = z.object({ answer: z.string({ error: "must be a string" }) });

/**
 * Reads a contract reply. Tolerated: prose before or after the object, Markdown fences around it
 * (both just surround the object), and trailing commas before `}` or `]`. Not tolerated: single
 * quotes, comments, unquoted keys, a cut-off object, an object with both "tool_calls" and "answer".
 * The first balanced `{…}` (braces inside strings do not count) that is a valid reply wins; the
 * insides of a well-formed object that is not a reply are not searched. A failure's `error` is
 * written for the model, to be sent back as the correction.
 */
export function parseContractReply(text: string): ContractParseResult {
  let shapeProblem: string | undefined;
  const syntaxProblems: { candidate: string; problem: string }[] = [];
  let from = 0;
  for (let start = text.indexOf("{"); start >= 0; start = text.indexOf("{", from)) {
    const end = closingBrace(text, start);
    if (end < 0) {
      syntaxProblems.push({
        candidate: text.slice(start),
        problem: "the JSON object is never closed (a '}' is missing; was the reply cut off?)",
      });
      from = start + 1;
      continue;
    }
    const candidate = text.slice(start, end + 1);
    const parsed = parseLenient(candidate);
    if (!parsed.ok) {
      syntaxProblems.push({ candidate, problem: `the JSON object is not valid JSON (${parsed.error})` });
      from = start + 1;
      continue;
    }
    const reply = readReply(parsed.value);
    if (reply.ok) return reply;
    shapeProblem ??= reply.error;
    from = end + 1;
  }
  // Report what the model most likely meant as its reply: a well-formed object of the wrong shape,
  // else the broken object that mentions the contract's keys, else the first broken one.
  const problem =
    shapeProblem ??
    (syntaxProblems.find(({ candidate }) => /"(tool_calls|answer)"/.test(candidate)) ?? syntaxProblems[0])?.problem ??
    "it contains no JSON object";
  return {
    ok: false,
    error: `Your reply could not be used: ${problem}. Reply again with exactly one JSON object and nothing else: ${SHAPES}.`,
  };
}

function readReply(value: unknown): ContractParseResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, error: "the JSON value is not an object" };
  const hasCalls = "tool_calls" in value;
  const hasAnswer = "answer" in value;
  if (hasCalls && hasAnswer) return { ok: false, error: 'the object has both "tool_calls" and "answer"; send one of them' };
  if (hasCalls) {
    const checked = ToolCallsReply.safeParse(value);
    if (checked.success) return { ok: true, value: { toolCalls: checked.data.tool_calls } };
    return { ok: false, error: describeIssues(checked.error) };
  }
  if (hasAnswer) {
    const checked = AnswerReply.safeParse(value);
    if (checked.success) return { ok: true, value: { answer: checked.data.answer } };
    return { ok: false, error: describeIssues(checked.error) };
  }
  const keys = Object.keys(value);
  return { ok: false, error: `the object has neither "tool_calls" nor "answer" (its keys: ${keys.length ? keys.join(", ") : "none"})` };
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${formatPath(issue.path)} ${issue.message}`).join("; ");
}

/** A zod path as the model wrote it: tool_calls[0].name */
function formatPath(path: PropertyKey[]): string {
  return path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i ? "." : ""}${String(key)}`)).join("");
}

/** Index of the `}` that closes the `{` at `start`, or -1; braces inside JSON strings do not count. */
export function closingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{") depth++;
    else if (char === "}" && --depth === 0) return i;
  }
  return -1;
}

function parseLenient(candidate: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(candidate) };
  } catch (error) {
    try {
      return { ok: true, value: JSON.parse(withoutTrailingCommas(candidate)) };
    } catch {
      return { ok: false, error: (error as Error).message };
    }
  }
}

/** Removes commas that directly precede `}` or `]` (whitespace between allowed), outside strings. */
function withoutTrailingCommas(json: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const char = json[i];
    if (inString) {
      if (char === "\\") {
        out += char + (json[i + 1] ?? "");
        i++;
        continue;
      }
      if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "," && /[}\]]/.test(json[nextNonSpace(json, i + 1)] ?? "")) continue;
    out += char;
  }
  return out;
}

function nextNonSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i])) i++;
  return i;
}

function parseJsonOrKeep(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
