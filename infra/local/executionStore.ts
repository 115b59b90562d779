import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

export type ExecutionStatus = "RUNNING" | "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED";

/** Where a stopped execution continues: the last top-level state it entered, with that state's input. */
export interface ResumePoint {
  state: string;
  input: unknown;
}

/** What the local Step Functions endpoint keeps of an execution (the history is kept apart). */
export interface ExecutionRecord {
  executionArn: string;
  stateMachineArn: string;
  /** The state machine version it runs (started through the alias or a version ARN). */
  stateMachineVersionArn?: string;
  /** The alias it was started through. */
  stateMachineAliasArn?: string;
  name: string;
  input: string;
  status: ExecutionStatus;
  startDate: number;
  stopDate?: number;
  output?: string;
  error?: string;
  cause?: string;
  resumeFrom?: ResumePoint;
  redriveCount: number;
  redriveDate?: number;
  /** The status change of the ended execution reached the notifier (the local EventBridge → SQS). */
  notified?: boolean;
}

/**
 * Executions kept in a folder, one JSON file each (written whole, then renamed, so a crash never
 * leaves half a file) plus an append-only history. Without a folder, nothing is kept.
 */
export class ExecutionStore {
  constructor(private readonly dir?: string) {
    if (dir) mkdirSync(dir, { recursive: true });
  }

  get persistent(): boolean {
    return this.dir !== undefined;
  }

  save(record: ExecutionRecord): void {
    if (!this.dir) return;
    const file = this.file(record.name, "json");
    writeFileSync(`${file}.tmp`, JSON.stringify(record));
    renameSync(`${file}.tmp`, file);
  }

  appendHistory(name: string, event: Record<string, unknown>): void {
    if (this.dir) appendFileSync(this.file(name, "history.jsonl"), `${JSON.stringify(event)}\n`);
  }

  history(name: string): Record<string, unknown>[] {
    if (!this.dir) return [];
    let text = "";
    try {
      text = readFileSync(this.file(name, "history.jsonl"), "utf8");
    } catch {
      return [];
    }
    // A crash may cut the last line short: keep what parses.
    return text.split("\n").flatMap((line) => {
      try {
        return line ? [JSON.parse(line) as Record<string, unknown>] : [];
      } catch {
        return [];
      }
    });
  }

  get(name: string): ExecutionRecord | undefined {
    if (!this.dir) return undefined;
    try {
      return JSON.parse(readFileSync(this.file(name, "json"), "utf8")) as ExecutionRecord;
    } catch {
      return undefined;
    }
  }

  /** Every kept execution (at start, to continue those that were running). */
  all(): ExecutionRecord[] {
    if (!this.dir) return [];
    return readdirSync(this.dir)
      .filter((file) => file.endsWith(".json"))
      .flatMap((file) => {
        const record = this.get(file.slice(0, -".json".length));
        return record ? [record] : [];
      });
  }

  private file(name: string, ext: string): string {
    // Execution names are 1–80 of [A-Za-z0-9-_] on AWS; anything else is encoded to stay a file name.
    if (!this.dir) throw new Error("Executions are kept in files only when the store has a folder.");
    return path.join(this.dir, `${/^[\w-]{1,80}$/.test(name) ? name : encodeURIComponent(name)}.${ext}`);
  }
}
