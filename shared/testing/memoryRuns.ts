import { RunRecord, type RunStatus, type Usage } from "../contracts/run.js";
import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import type { RunPatch, Runs } from "../ports/runs.js";
import { stored } from "./clone.js";

/** The runs port in memory: every change conditional on the status, as the DynamoDB adapter. */
export class MemoryRuns implements Runs {
  readonly records = new Map<string, RunRecord>();

  async create(run: RunRecord): Promise<boolean> {
    if (this.records.has(run.runId)) return false;
    this.records.set(run.runId, stored(RunRecord.parse(run)));
    return true;
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    return stored(this.records.get(runId));
  }

  async startIfQueued(runId: string): Promise<RunRecord | undefined> {
    const run = this.records.get(runId);
    if (run?.status !== "queued") return undefined;
    return this.change(run, { status: "running" });
  }

  async status(runId: string): Promise<RunStatus | undefined> {
    return this.records.get(runId)?.status;
  }

  async update(runId: string, patch: RunPatch, onlyIf?: readonly RunStatus[], usage?: Partial<Usage>): Promise<boolean> {
    const run = this.records.get(runId);
    if (!run || (onlyIf && !onlyIf.includes(run.status))) return false;
    this.change(run, patch, usage);
    return true;
  }

  async end(runId: string, patch: RunPatch, from: readonly RunStatus[]): Promise<RunRecord | undefined> {
    const run = this.records.get(runId);
    if (!run || !from.includes(run.status)) return undefined;
    return this.change(run, patch);
  }

  async reopen(runId: string, from: readonly RunStatus[]): Promise<boolean> {
    const run = this.records.get(runId);
    if (!run || !from.includes(run.status)) return false;
    const reopened: Record<string, unknown> = { ...run, status: "running", updatedAt: new Date().toISOString() };
    for (const field of ["endedAt", "error", "stateTransitions", "terminalSeq"]) delete reopened[field];
    this.records.set(runId, reopened as RunRecord);
    return true;
  }

  async addUsage(runId: string, delta: Partial<Usage>): Promise<void> {
    const run = this.records.get(runId);
    if (run) this.change(run, {}, delta, false);
  }

  async countFork(runId: string): Promise<boolean> {
    const run = this.records.get(runId);
    if (!run) return false;
    this.records.set(runId, { ...run, forkCount: (run.forkCount ?? 0) + 1 });
    return true;
  }

  /** Runs that have not ended. */
  active(): RunRecord[] {
    return [...this.records.values()].filter((r) => !TERMINAL_STATUSES.has(r.status));
  }

  private change(run: RunRecord, patch: RunPatch, usage: Partial<Usage> = {}, touch = true): RunRecord {
    const fields = Object.fromEntries(Object.entries(stored(patch)).filter(([, v]) => v !== undefined));
    const total = { ...run.usage };
    for (const [name, value] of Object.entries(usage)) if (value) total[name as keyof Usage] = (total[name as keyof Usage] ?? 0) + value;
    const next = { ...run, ...fields, usage: total, ...(touch ? { updatedAt: new Date().toISOString() } : {}) } as RunRecord;
    this.records.set(run.runId, next);
    return stored(next);
  }
}
