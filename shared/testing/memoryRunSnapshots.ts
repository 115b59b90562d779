import type { Ports } from "../ports/index.js";
import type { RunSnapshot, RunSnapshots } from "../ports/runSnapshots.js";

/** The run snapshots port over the other ports (in memory, their fakes): the run, then what lies beside it. */
export class MemoryRunSnapshots implements RunSnapshots {
  constructor(private readonly ports: Pick<Ports, "runs" | "tasks" | "files" | "interrupts">) {}

  async get(runId: string): Promise<RunSnapshot | undefined> {
    const run = await this.ports.runs.get(runId);
    if (!run) return undefined;
    const [tasks, files, interrupts] = await Promise.all([
      this.ports.tasks.list(runId),
      this.ports.files.list(runId),
      this.ports.interrupts.list(runId),
    ]);
    return { run, tasks, files, interrupts };
  }
}
