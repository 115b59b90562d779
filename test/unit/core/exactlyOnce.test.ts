import { setImmediate as tick } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { Ports } from "../../../shared/ports/index.js";
import { memoryPorts } from "../../../shared/testing/memoryPorts.js";
import { attemptPorts, Crash, Faults, type Life } from "../../support/faults.js";
import { runRecord } from "../../support/records.js";
import { driveRun } from "../../support/stateMachine.js";
import { teamModel } from "../../support/team.js";

/**
 * Fault injection: a run is driven through the step modules in the state machine's order; the
 * k-th fault point (before and after each model call, tool call, event append and journal write,
 * and after each state's output) crashes the step that reached it, and the step runs again with
 * the same input, as the state's Retry would. For every k until a run passes with no crash, the
 * run ends as the crash-free run did, and each write tool's side effect happened exactly once.
 */

interface Outcome {
  status?: string;
  result?: string;
  /** Writes (puts that stored bytes) per file name. */
  writesPerFile: Record<string, number>;
  /** file.created events per file name. */
  announcedPerFile: Record<string, number>;
  slotsTaken: number;
  crashedAt?: string;
  retries: number;
  points: number;
}

async function runWithCrashAt(mode: "react" | "plan_solve", crashAt?: number): Promise<Outcome> {
  const memory = memoryPorts({ model: teamModel() });
  const { fakes } = memory;
  const runId = "run_faults";
  await fakes.runs.create(runRecord(runId, { requestedMode: mode }));
  await fakes.activeRuns.acquire("tenant_1", 10);
  const faults = new Faults(crashAt);
  let retries = 0;
  const attempt = async <T>(state: string, step: (ports: Ports) => Promise<T>): Promise<T> => {
    for (;;) {
      const life: Life = { dead: false };
      try {
        const output = await step(attemptPorts(memory, life, faults));
        faults.point(life, `${state} output`);
        return output;
      } catch (error) {
        if (!(error instanceof Crash) && !life.dead) throw error;
        life.dead = true;
        retries++;
        // What the dead attempt still had in flight fails now; then Step Functions retries the state.
        for (let i = 0; i < 5; i++) await tick();
      }
    }
  };
  await driveRun(memory.ports, runId, { attempt, executions: fakes.executions });
  const run = await fakes.runs.get(runId);
  const writesPerFile: Record<string, number> = {};
  for (const write of fakes.files.writes) writesPerFile[write.name] = (writesPerFile[write.name] ?? 0) + 1;
  const announcedPerFile: Record<string, number> = {};
  for (const event of fakes.events.all(runId)) if (event.type === "file.created") announcedPerFile[event.data.name] = (announcedPerFile[event.data.name] ?? 0) + 1;
  return { status: run?.status, result: run?.result, writesPerFile, announcedPerFile, slotsTaken: await fakes.activeRuns.count("tenant_1"), crashedAt: faults.crashedAt, retries, points: faults.reached };
}

describe.each(["react", "plan_solve"] as const)("a %s run crashed at every fault point", (mode) => {
  it("ends with the crash-free run's answer, each write tool's file written and announced exactly once", async () => {
    const clean = await runWithCrashAt(mode);
    expect(clean).toMatchObject({ status: "succeeded", retries: 0, slotsTaken: 0 });
    expect(Object.values(clean.writesPerFile)).toEqual([1]);
    expect(Object.values(clean.announcedPerFile)).toEqual([1]);
    expect(clean.points).toBeGreaterThan(20);

    const crashed: string[] = [];
    for (let k = 1; ; k++) {
      const outcome = await runWithCrashAt(mode, k);
      if (!outcome.crashedAt) break; // past the last point: this run had no crash
      crashed.push(outcome.crashedAt);
      const seen = { k, at: outcome.crashedAt, status: outcome.status, result: outcome.result, writes: outcome.writesPerFile, announced: outcome.announcedPerFile, slots: outcome.slotsTaken };
      expect(seen).toEqual({ ...seen, status: "succeeded", result: clean.result, writes: clean.writesPerFile, announced: clean.announcedPerFile, slots: 0 });
      expect(outcome.retries).toBeGreaterThanOrEqual(1);
    }
    // Every kind of point was hit, the write tool's own among them.
    expect(crashed.length).toBe(clean.points);
    for (const label of ["before model call", "after model call", "before tool write_artifact", "after tool write_artifact", "before event append", "after event append", "before journal write", "after journal write", "Finalize output"]) {
      expect(crashed).toContain(label);
    }
  });
});
