import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ArgumentView, parseEdited } from "../display/toolArguments.js";

/**
 * A tool call's arguments edited in the person's editor, as values: each argument under a marker
 * line, code and text exactly as they are (no JSON escapes), other values as pretty JSON.
 */

const MARKER = /^===== (\S+) \((code|text|JSON)[^)]*\) =====$/;
const HEADER = [
  "# Edit the values under each ===== line; code and text as they are, values marked JSON as JSON.",
  "# Save and close to run the tool with them; delete everything to keep the agent's arguments.",
];

export function editableText(views: ArgumentView[]): string {
  const sections = views.map((view) => {
    const what = view.kind === "code" ? `code${view.language ? `, ${view.language}` : ""}` : view.kind === "json" ? "JSON" : "text";
    return `===== ${view.name} (${what}) =====\n${view.text}\n`;
  });
  return `${HEADER.join("\n")}\n${sections.join("")}`;
}

/** The edited arguments, undefined when the file was emptied, or what is wrong with it. */
export function parseEditableText(
  text: string,
  views: ArgumentView[],
): { arguments: Record<string, unknown> } | { error: string } | undefined {
  if (!text.trim()) return undefined;
  const values = new Map<string, string[]>();
  let current: string[] | undefined;
  // Each value is followed by one newline, the last one by the file's final newline.
  for (const line of text.replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n")) {
    const marker = MARKER.exec(line);
    if (marker) {
      current = [];
      values.set(marker[1] ?? "", current);
    } else if (current) current.push(line);
    else if (line.trim() && !line.startsWith("#")) return { error: `Text before the first ===== line: ${line.slice(0, 60)}` };
  }
  const edited: Record<string, unknown> = {};
  for (const view of views) {
    const lines = values.get(view.name);
    if (!lines) return { error: `The ===== ${view.name} ===== line is missing.` };
    const parsed = parseEdited(view, lines.join("\n"));
    if ("error" in parsed) return parsed;
    edited[view.name] = parsed.value;
  }
  return { arguments: edited };
}

/** Opens $VISUAL / $EDITOR (else vi) on the arguments; undefined when no editor could run. */
export function editInEditor(views: ArgumentView[], env: NodeJS.ProcessEnv): string | undefined {
  const editor = env.VISUAL || env.EDITOR || "vi";
  const dir = mkdtempSync(path.join(tmpdir(), "stepwise-edit-"));
  const file = path.join(dir, "arguments.txt");
  try {
    writeFileSync(file, editableText(views));
    // Through the shell, so an EDITOR with flags ("code --wait") works as it does for git.
    const result = spawnSync("sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit" });
    if (result.error || result.status !== 0) return undefined;
    return readFileSync(file, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
