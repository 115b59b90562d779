// "use <tool> {json arguments}": how a request names a tool call for the offline model, so any
// tool offered (MCP tools included) can be shown and tested without a model key.

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
    const afterName = match.index! + match[0].length;
    const braceAt = text.slice(afterName).search(/\S/) + afterName;
    const json = text[braceAt] === "{" ? balancedObject(text, braceAt) : undefined;
    const args = json === undefined ? {} : parseObject(json);
    if (args === undefined) continue;
    found.push({ name: match[1]!, arguments: args, text: json === undefined ? match[0] : text.slice(match.index!, braceAt + json.length) });
  }
  return found;
}

/** The JSON object starting at `start` (braces inside strings ignored), or undefined if unclosed. */
function balancedObject(text: string, start: number): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

function parseObject(json: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(json) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
