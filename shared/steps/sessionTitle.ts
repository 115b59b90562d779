import { portsForAgent } from "../agent/savedAgent.js";
import type { Usage } from "../contracts/run.js";
import { errorMessage } from "../errors.js";
import type { ChatMessage } from "../llm/types.js";
import { clip } from "../memory/share.js";
import { logger } from "../observability.js";
import type { Ports, SettingsOf } from "../ports/index.js";

/** What titling a session touches: the run that answered, its session, the model. */
export type SessionTitlePorts = Pick<Ports, "runs" | "sessions" | "model"> & SettingsOf<"model">;

/** A title longer than this is cut at a word (lists show one line). */
export const MAX_TITLE_CHARS = 80;
/** How much of the request and of the answer the title call is shown: a subject, not the whole. */
const SHOWN_CHARS = 2_000;
/** The run has ended already: a title that takes longer than this is not worth waiting for. */
const TITLE_WAIT_MS = 20_000;

/**
 * After a session's first answered turn (newAgent titles a conversation once its first reply is
 * done), one short model call of the `title` role names the session; the sessions list, the
 * session's view and the run that answered show it. Runs once the run has ended, so nobody waits
 * for it; it never fails the run: a model that cannot title leaves the session untitled.
 */
export async function titleSession(ports: SessionTitlePorts, runId: string): Promise<string | undefined> {
  if (!ports.settings.model.sessionTitles) return undefined;
  try {
    const run = await ports.runs.get(runId);
    // A replay makes no model call: the session keeps the title its recorded run gave it.
    if (!run?.result || run.replayOf) return undefined;
    // Titled once: by the session's first answered turn, or by the first one after titles were turned on.
    if ((await ports.sessions.title(run.tenantId, run.sessionId)) !== undefined) return undefined;
    const response = await portsForAgent(ports, run.agent).model.complete({
      role: "title",
      messages: titlePrompt(run.input, run.result),
      signal: AbortSignal.timeout(TITLE_WAIT_MS),
    });
    const usage: Partial<Usage> = { ...response.usage, llmCalls: 1, ...(response.fallback ? { fallbackCalls: 1 } : {}) };
    const title = cleanTitle(response.content ?? "");
    const set = title !== undefined && (await ports.sessions.setTitle(run.tenantId, run.sessionId, title));
    await ports.runs.update(runId, set ? { title } : {}, undefined, usage);
    return set ? title : undefined;
  } catch (error) {
    logger.warn("the session could not be titled; it stays untitled", { runId, error: errorMessage(error) });
    return undefined;
  }
}

/** The title call's messages: what to write, then the turn it names. */
export function titlePrompt(request: string, answer: string): ChatMessage[] {
  return [
    {
      role: "system",
      content:
        "You name conversations for a list of sessions. Reply with a title of at most eight words that names the subject of the " +
        "request, in the request's language. Reply with the title alone: no quotes, no label, no final period.",
    },
    { role: "user", content: `Request: ${clip(request, SHOWN_CHARS)}\n\nAnswer: ${clip(answer, SHOWN_CHARS)}` },
  ];
}

/**
 * The title in a reply, on one line: without a "Title:" label, heading marks, surrounding quotes
 * or a final period; cut at a word past MAX_TITLE_CHARS. Undefined when nothing is left.
 */
export function cleanTitle(reply: string): string | undefined {
  const line = reply.split(/\r?\n/).find((l) => l.trim() !== "") ?? "";
  // "标题" ("title"), the full-width colon, CJK quotes and the ideographic full stop, as escapes:
  // a bundle stays pure ASCII, which Node loads faster (shared/memory/urls.ts says more).
  const text = line
    .replace(/^\s*#+\s*/, "")
    .replace(/^\s*(title|\u6807\u9898)\s*[:\uff1a]\s*/i, "")
    .trim()
    .replace(/^["'\u201c\u2018\u300c\u300e*_`]+|["'\u201d\u2019\u300d\u300f*_`]+$/g, "")
    .replace(/[.\u3002]$/, "")
    .replace(/\s+/g, " ")
    .trim();
  if (!text) return undefined;
  if (text.length <= MAX_TITLE_CHARS) return text;
  const cut = text.slice(0, MAX_TITLE_CHARS - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > MAX_TITLE_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}
