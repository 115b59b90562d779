// Reading and research from the request alone: "summarize the attached PDF" reads the named
// document (or the run's only one) with read_artifact and answers with its first lines; "research …"
// or "deep search …" runs deep_search on the question, whose notes become a file of the run.

import { assistantToolCalls, cut, isFailure, listedFiles, taskOf, toolResultsSinceLastUser } from "./conversation.js";
import { type ChatMessage, callTools, type Decision, say } from "./types.js";

const SUMMARY = /\bsummari[sz]e\b/i;
const RESEARCH = /\b(research|deep search|deep_search)\b|研究|调研|调查|深度搜索/i;
const DOCUMENTS = /\.(pdf|docx|xlsx?)$/i;

/** The document a task names (or the run's only document), if any. */
function documentOf(task: string, request: string, files: readonly string[]): string | undefined {
  const documents = files.filter((name) => DOCUMENTS.test(name));
  return documents.find((name) => task.includes(name) || request.includes(name)) ?? (documents.length === 1 ? documents[0] : undefined);
}

/** The question of a research request: the request without its leading verb. */
const questionOf = (text: string) =>
  cut(
    text
      .replace(/^\s*(please\s+)?(do\s+a\s+)?(deep[ _]search|research)\s*(on|about|into|:)?\s*/i, "")
      .replace(/^\s*请?(深度搜索|研究|调研|调查)(一下)?\s*[:：]?\s*/, "")
      .trim(),
    400,
  ) || text.trim();

/** Plan steps for a summary of a document or a research question, when the executors have the tool; else undefined. */
export function researchSteps(
  request: string,
  team: ReadonlySet<string>,
  files: readonly string[],
): Array<Record<string, unknown>> | undefined {
  const document = documentOf(request, request, files);
  if (SUMMARY.test(request) && document && team.has("read_artifact")) {
    return [
      {
        title: `Summarize ${document}`,
        tasks: [`Summarize ${document} with read_artifact`],
        done_when: "The summary names the document's main points.",
      },
    ];
  }
  if (RESEARCH.test(request) && team.has("deep_search")) {
    return [
      {
        title: "Research the question",
        tasks: [`Research with deep_search: ${questionOf(request)}`],
        done_when: "Notes with numbered sources are saved.",
      },
    ];
  }
  return undefined;
}

/** The executor's (or ReAct agent's) move for a summary or research task, else undefined. */
export function researchMove(messages: readonly ChatMessage[], offered: ReadonlySet<string>): Decision | undefined {
  const { task, request } = taskOf(messages);
  const output = toolResultsSinceLastUser(messages).at(-1);
  if (output !== undefined) {
    const last = assistantToolCalls(messages).at(-1);
    if (last?.name === "read_artifact" && SUMMARY.test(task)) {
      if (isFailure(output)) return say(`The document could not be read: ${output.trim().split("\n")[0]}`);
      const name = String((last.arguments as { filename?: unknown }).filename ?? "the document");
      // Its first lines of text (headings such as "## Page 1" apart), in order: what it opens with.
      const lines = output
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith("#") && !line.startsWith("[characters"));
      return say([`Summary of ${name}:`, ...lines.slice(0, 5).map((line) => `- ${cut(line, 300)}`)].join("\n"));
    }
    if (last?.name === "deep_search") return say(output.trim());
    return undefined;
  }
  if (SUMMARY.test(task) && offered.has("read_artifact")) {
    const document = documentOf(task, request, listedFiles(messages));
    if (document) return callTools([{ name: "read_artifact", arguments: { filename: document } }]);
  }
  if (RESEARCH.test(task) && offered.has("deep_search")) {
    const question = questionOf(task.replace(/^Research with deep_search:\s*/i, ""));
    return callTools([{ name: "deep_search", arguments: { question } }]);
  }
  return undefined;
}
