/**
 * How a tool call's arguments are shown to the person who approves it, in the console and the CLI:
 * code as code (with its language where known), text as text, anything else as pretty JSON. Edits
 * are made to these values, never to an escaped JSON string, and read back with parseEdited().
 */

/** The languages the console and the CLI highlight (highlight.js names). */
export const LANGUAGES = ["bash", "css", "javascript", "json", "markdown", "python", "sql", "typescript", "xml", "yaml"] as const;

export type ArgumentView =
  /** A program, shown monospaced with its line breaks, highlighted when the language is known. */
  | { name: string; kind: "code"; language?: string; text: string }
  /** Prose, wrapped. */
  | { name: string; kind: "text"; text: string }
  /** Numbers, booleans, null, lists and objects: pretty-printed JSON, edited as JSON. */
  | { name: string; kind: "json"; text: string };

/** Argument names that hold a program. */
const CODE_NAMES = /^(code|script|source|source_code|program|query|sql|command|cmd|snippet|patch|diff)$/i;
/** Argument names that hold a file's body, whose language the file name tells. */
const BODY_NAMES = /^(content|contents|body|text|data)$/i;
const BY_EXTENSION: Record<string, string> = {
  py: "python",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  ts: "typescript",
  json: "json",
  sh: "bash",
  bash: "bash",
  sql: "sql",
  html: "xml",
  htm: "xml",
  xml: "xml",
  svg: "xml",
  css: "css",
  md: "markdown",
  markdown: "markdown",
  yml: "yaml",
  yaml: "yaml",
};
const BY_NAME: Record<string, string> = { sql: "sql", query: "sql", command: "bash", cmd: "bash" };
const LANGUAGE_WORDS: [RegExp, string][] = [
  [/\bpython\b/i, "python"],
  [/\bjavascript\b|\bnode\.?js\b/i, "javascript"],
  [/\btypescript\b/i, "typescript"],
  [/\bsql\b/i, "sql"],
  [/\b(bash|shell)\b/i, "bash"],
];

function languageOf(name: string, args: Record<string, unknown>, toolDescription: string): string | undefined {
  const stated = args.language ?? args.lang;
  if (typeof stated === "string" && (LANGUAGES as readonly string[]).includes(stated.toLowerCase())) return stated.toLowerCase();
  const file = [args.filename, args.path, args.file, args.name].find((v): v is string => typeof v === "string");
  const extension = file ? /\.([A-Za-z0-9]+)$/.exec(file)?.[1]?.toLowerCase() : undefined;
  if (extension && BY_EXTENSION[extension]) return BY_EXTENSION[extension];
  if (BY_NAME[name.toLowerCase()]) return BY_NAME[name.toLowerCase()];
  return LANGUAGE_WORDS.find(([words]) => words.test(toolDescription))?.[1];
}

/** One view per argument, in the order the agent gave them. */
export function argumentViews(given: unknown, toolDescription = ""): ArgumentView[] {
  const args = typeof given === "object" && given !== null && !Array.isArray(given) ? (given as Record<string, unknown>) : {};
  return Object.entries(args).map(([name, value]): ArgumentView => {
    if (typeof value !== "string") return { name, kind: "json", text: JSON.stringify(value, null, 2) ?? "null" };
    if (CODE_NAMES.test(name)) return { name, kind: "code", language: languageOf(name, args, toolDescription), text: value };
    if (BODY_NAMES.test(name)) {
      const language = languageOf(name, args, "");
      if (language) return { name, kind: "code", language, text: value };
    }
    return { name, kind: "text", text: value };
  });
}

/** The argument's value from what a person typed: text as typed, JSON parsed (or why it is not JSON). */
export function parseEdited(view: ArgumentView, typed: string): { value: unknown } | { error: string } {
  if (view.kind !== "json") return { value: typed };
  try {
    return { value: JSON.parse(typed) };
  } catch (error) {
    return { error: `'${view.name}' is not valid JSON: ${(error as Error).message}` };
  }
}
