import { createHash } from "node:crypto";

/** OpenAI function names: letters, digits, `_` and `-`, 1 to 64 characters. */
export const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_LENGTH = 64;
const SEPARATOR = "__";

/**
 * The names agents see for one source's tools: `<source>__<tool>`. A name that is not a valid
 * function name as it stands (other characters, over 64 characters) or that two tools would share
 * becomes `<cleaned prefix>_<8 hex of the original>`: deterministic, so the same tools always get
 * the same names and a journaled call maps back to the same tool on replay.
 * Returns exposed name → the tool's own name.
 */
export function exposedToolNames(source: string, tools: readonly string[]): Map<string, string> {
  const plain = (tool: string) => `${source}${SEPARATOR}${tool}`;
  const cleaned = (tool: string) => plain(tool).replace(/[^a-zA-Z0-9_-]/g, "_");
  const uses = new Map<string, number>();
  for (const tool of tools) uses.set(cleaned(tool), (uses.get(cleaned(tool)) ?? 0) + 1);
  const names = new Map<string, string>();
  for (const tool of tools) {
    const asIs = FUNCTION_NAME.test(plain(tool)) && uses.get(plain(tool)) === 1;
    names.set(asIs ? plain(tool) : hashed(cleaned(tool), plain(tool)), tool);
  }
  return names;
}

function hashed(name: string, original: string): string {
  const hash = createHash("sha256").update(original).digest("hex").slice(0, 8);
  return `${name.slice(0, MAX_LENGTH - hash.length - 1)}_${hash}`;
}
