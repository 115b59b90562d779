import { BadRequestError } from "../errors.js";
import { type FileMeta, namesOfTask } from "../ports/files.js";
import { compareTasks, type TaskRecord } from "../ports/tasks.js";
import { cutToGraphemes, utf8Bytes } from "../text/bytes.js";
import { keptPart } from "../text/keptNote.js";

/**
 * A task as a run view lists it: its result previewed, with a link to the whole. A view holds many
 * tasks, each result up to a record's 100 KB (Chinese text is 3 bytes a character): whole, 300 of
 * them would pass the 6 MB a Lambda function may answer.
 */

/** A task's result in a view: at most this many UTF-8 bytes, its note included. */
export const TASK_PREVIEW_BYTES = 4_000;
/** Room kept in a preview for its note ("[preview: the first … of … bytes; …]"). */
const NOTE_ROOM = 120;

/**
 * A run view, or a page of its tasks, is at most this many bytes of JSON. Lambda answers at most
 * 6 MB, and API Gateway's envelope escapes the body's JSON again (a quote or backslash takes twice
 * its bytes): 1 MB leaves room for both.
 */
export const VIEW_BUDGET_BYTES = 1_000_000;

/** Where the whole of a task's result is: on its record, or in a run file when the record keeps only its beginning. */
export function wholeResultOf(task: Pick<TaskRecord, "result">, files: readonly FileMeta[]): { bytes: number; file?: string } | undefined {
  if (task.result === undefined) return undefined;
  const kept = keptPart(task.result);
  const file = kept && files.find((f) => f.name === kept.file);
  // Without its file (a store that could not take it), the record's text is all there is.
  return file ? { bytes: file.bytes, file: file.name } : { bytes: utf8Bytes(task.result) };
}

/**
 * The beginning of a result a view shows: whole when it fits TASK_PREVIEW_BYTES, else cut between
 * two graphemes with a note saying how much is shown of how much.
 */
export function resultPreview(result: string, whole: { bytes: number; file?: string }): { text: string; cut: boolean } {
  const shown = (whole.file && keptPart(result)?.beginning) || result;
  if (!whole.file && utf8Bytes(result) <= TASK_PREVIEW_BYTES) return { text: result, cut: false };
  const beginning = cutToGraphemes(shown, TASK_PREVIEW_BYTES - NOTE_ROOM);
  const note = `\n\n[preview: the first ${utf8Bytes(beginning)} of ${whole.bytes} bytes; the whole result is at links.result]`;
  return { text: `${beginning}${note}`, cut: true };
}

/** Where the API serves a task's whole result. */
export const taskResultLink = (api: string, runId: string, taskId: string) =>
  `${api}/v1/runs/${runId}/tasks/${encodeURIComponent(taskId)}/result`;

/** One task of `GET /v1/runs/{id}` and `GET /v1/runs/{id}/tasks`. */
export function taskView(task: TaskRecord, files: readonly FileMeta[], api: string, runId: string) {
  const whole = wholeResultOf(task, files);
  const preview = task.result === undefined || !whole ? undefined : resultPreview(task.result, whole);
  return {
    iteration: task.iteration,
    stepIndex: task.stepIndex,
    taskId: task.taskId,
    title: task.title,
    status: task.status,
    result: preview?.text ?? null,
    resultBytes: whole?.bytes ?? null,
    resultCut: preview?.cut ?? false,
    startedAt: task.startedAt ?? null,
    endedAt: task.endedAt ?? null,
    ...(task.stopReason ? { stopReason: task.stopReason } : {}),
    ...(task.undone?.length ? { undone: task.undone } : {}),
    files: namesOfTask(files, task.taskId),
    links: { result: taskResultLink(api, runId, task.taskId) },
  };
}

export type TaskView = ReturnType<typeof taskView>;

/** Tasks from a cursor on, as many as `limit` and `budgetBytes` of JSON allow (always one, so paging goes on). */
export interface TaskPageQuery {
  cursor?: string;
  limit: number;
}

export function taskPage(
  tasks: readonly TaskRecord[],
  query: TaskPageQuery,
  budgetBytes: number,
  viewOf: (task: TaskRecord) => TaskView,
): { tasks: TaskView[]; nextCursor: string | null } {
  const after = query.cursor === undefined ? undefined : taskPosition(query.cursor);
  const rest = after ? tasks.filter((t) => compareTasks(t, after) > 0) : tasks;
  const page: TaskView[] = [];
  let used = 2; // the list's brackets
  for (const task of rest) {
    if (page.length === query.limit) break;
    const view = viewOf(task);
    const bytes = utf8Bytes(JSON.stringify(view)) + 1;
    if (page.length > 0 && used + bytes > budgetBytes) break;
    page.push(view);
    used += bytes;
  }
  const last = page.at(-1);
  return { tasks: page, nextCursor: last && page.length < rest.length ? taskCursor(last) : null };
}

/** A cursor names the last task of a page: the next page starts after it, whatever tasks were added since. */
function taskCursor(task: Pick<TaskRecord, "iteration" | "taskId">): string {
  return Buffer.from(JSON.stringify([task.iteration, task.taskId])).toString("base64url");
}

function taskPosition(cursor: string): Pick<TaskRecord, "iteration" | "taskId"> {
  try {
    const [iteration, taskId] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (Number.isInteger(iteration) && typeof taskId === "string") return { iteration: iteration as number, taskId };
  } catch {
    // refused below
  }
  throw new BadRequestError("cursor is not one this API gave out; start again without it.", undefined, "invalid_cursor");
}
