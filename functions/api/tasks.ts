import { TasksQuery } from "../../shared/contracts/api.js";
import { fileText } from "../../shared/ports/files.js";
import { ownRunSnapshot } from "../../shared/run/access.js";
import { wholeTaskResult } from "../../shared/run/taskResults.js";
import { taskPage, taskView, VIEW_BUDGET_BYTES } from "../../shared/views/taskView.js";
import { type HttpResult, header, json } from "../http.js";
import { parseQuery } from "../jsonBody.js";
import { linksFor } from "../links.js";
import { decoded } from "./files.js";
import type { Request, Route } from "./routes.js";

/** A run's tasks page by page (the run view holds the first page), and each task's whole result. */
export const taskRoutes: Route[] = [
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/tasks$/, handle: listTasks, query: TasksQuery },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/tasks\/(?<taskId>[^/]+)\/result$/, handle: taskResult },
];

async function listTasks({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const query = parseQuery(event, TasksQuery);
  const { run, tasks, files } = await ownRunSnapshot(services, tenantId, params.runId);
  const api = linksFor(event, services).api;
  const page = taskPage(tasks, query, VIEW_BUDGET_BYTES, (task) => taskView(task, files, api, run.runId));
  return json(200, { runId: run.runId, tasks: page.tasks, taskCount: tasks.length, nextCursor: page.nextCursor });
}

/**
 * The whole result: the text itself when the task's record holds it (at most ~100 KB), else a 302
 * to a short-lived link to the run file that holds it, so storage streams it whatever its size (the
 * API answers at most 6 MB). With `Accept: application/json`: {taskId, bytes, text | url} (a page's
 * fetch with an API key cannot follow a redirect to another origin; it fetches the url).
 */
async function taskResult({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const taskId = decoded(params.taskId);
  const whole = await wholeTaskResult(services, tenantId, params.runId, taskId ?? params.taskId);
  let text = "text" in whole ? whole.text : undefined;
  const url = "file" in whole ? await services.transfers.downloadUrl(params.runId, whole.file) : undefined;
  // A file kept in the table (stored before S3) has no link: it is small enough to pass through.
  if ("file" in whole && !url) {
    const file = await services.files.get(params.runId, whole.file);
    text = file ? fileText(file) : "";
  }
  if (/\bapplication\/json\b/.test(header(event, "accept") ?? ""))
    return json(200, { taskId: whole.taskId, bytes: whole.bytes, ...(text !== undefined ? { text } : { url }) });
  if (text !== undefined)
    return { statusCode: 200, headers: { "content-type": "text/markdown; charset=utf-8", "cache-control": "no-store" }, body: text };
  return { statusCode: 302, headers: { location: url ?? "", "cache-control": "no-store" }, body: "" };
}
