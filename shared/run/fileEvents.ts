import type { RunEvents } from "../ports/events.js";
import type { FileMeta, FileStore, PutFileOptions, StoredFile } from "../ports/files.js";
import type { Runs } from "../ports/runs.js";

/**
 * The files port, telling the run's watchers about every file written (`file.created`: name, type,
 * size, where to download it and the plan task that wrote it), whoever wrote it: a report, code output, a whole tool output.
 */
export class EventedFileStore implements FileStore {
  private readonly links = new Map<string, Promise<string>>();

  constructor(
    private readonly files: FileStore,
    private readonly events: Pick<RunEvents, "append">,
    private readonly runs: Pick<Runs, "get">,
  ) {}

  async put(runId: string, name: string, body: string | Uint8Array, options?: PutFileOptions): Promise<FileMeta> {
    const meta = await this.files.put(runId, name, body, options);
    const download = `${await this.runLink(runId)}/files/${encodeURIComponent(name)}`;
    // Announced once per write tool call: a call retried after a crash announces nothing again.
    const once = options?.idempotencyKey ? { key: `file.created:${options.idempotencyKey}:${name}` } : {};
    await this.events.append(
      runId,
      [
        {
          type: "file.created",
          data: {
            name: meta.name,
            contentType: meta.contentType,
            bytes: meta.bytes,
            description: meta.description,
            download,
            ...(meta.taskId ? { taskId: meta.taskId } : {}),
          },
        },
      ],
      once,
    );
    return meta;
  }

  get(runId: string, name: string): Promise<StoredFile | undefined> {
    return this.files.get(runId, name);
  }

  getRange(runId: string, name: string, start: number, end: number): Promise<{ meta: FileMeta; body: Uint8Array } | undefined> {
    return this.files.getRange(runId, name, start, end);
  }

  list(runId: string): Promise<FileMeta[]> {
    return this.files.list(runId);
  }

  /** The run's address in the API, fixed when it was submitted. */
  private runLink(runId: string): Promise<string> {
    let link = this.links.get(runId);
    if (!link) {
      link = this.runs.get(runId).then((run) => run?.links?.self ?? `/v1/runs/${runId}`);
      this.links.set(runId, link);
    }
    return link;
  }
}
