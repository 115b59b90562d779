// "use <tool> {json arguments}": how a request names a tool call for the offline model, so any
// tool offered (MCP tools included) can be shown and tested without a model key.
import { closingBrace } from "../../shared/llm/jsonContract.js";

export interface ToolDirective {
  name: string;
  arguments: Record<string, unknown>;
  /** The directive as written, e.g. `use everything__add {"a": 2, "b": 3}`. */
  text: string;
}

const DIRECTIVE = /\buse\s+([A-Za-z0-9_-]{1,64})\b/g;

/** Every `use <tool> {…}` in the text, in order; a directive without arguments means `{}`. */
export function findToolDirectives(text: string): ToolDirective[] {
  const found: ToolDirective[] = [];
  for (const match of text.matchAll(DIRECTIVE)) {
    const afterName = match.index + match[0].length;
    const braceAt = text.slice(afterName).search(/\S/) + afterName;
    const json = text[braceAt] === "{" ? balancedObject(text, braceAt) : undefined;
    const args = json === undefined ? {} : parseObject(json);
    if (args === undefined) continue;
    found.push({ name: match[1], arguments: args, text: json === undefined ? match[0] : text.slice(match.index, braceAt + json.length) });
  }
  return found;
}

/** The JSON object starting at `start` (braces inside strings ignored), or undefined if unclosed. */
function balancedObject(text: string, start: number): string | undefined {
  const end = closingBrace(text, start);
  return end < 0 ? undefined : text.slice(start, end + 1);
}

function parseObject(json: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(json) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
