import { expect } from "vitest";
import type { RunRecord } from "../../shared/contracts/run.js";
import type { PlanOutput } from "../../shared/contracts/steps.js";
import type { ChatModel } from "../../shared/llm/types.js";
import type { Tool } from "../../shared/ports/tools.js";
import { memoryPorts } from "../../shared/testing/memoryPorts.js";
import type { ScriptedModel } from "../../shared/testing/scriptedModel.js";
import type { SettingsOverrides } from "../../shared/testing/settings.js";
import { runRecord } from "./records.js";
import { teamModel } from "./team.js";

/** The core over in-memory ports, with one run already submitted (queued, its execution started, its slot taken). */
export async function withRun<M extends ChatModel = ScriptedModel>(
  fields: Partial<RunRecord> = {},
  options: { model?: M; tools?: readonly Tool[]; settings?: SettingsOverrides } = {},
) {
  const model = options.model ?? (teamModel() as ChatModel as M);
  const { ports, fakes } = memoryPorts({ model, tools: options.tools, settings: options.settings });
  const runId = `run_${Math.random().toString(36).slice(2, 10)}`;
  const links = {
    self: `http://api.test/v1/runs/${runId}`,
    events: `http://api.test/v1/runs/${runId}/events`,
    stream: `http://api.test/v1/runs/${runId}/stream`,
  };
  const run = runRecord(runId, { executionArn: ports.executions.arnFor(runId), links, ...fields });
  await ports.runs.create(run);
  await fakes.activeRuns.acquire(run.tenantId, 10);
  await fakes.executions.start(runId);
  return { ports, fakes, runId, run, model };
}

/** The run's event types in order. */
export const eventTypes = (fakes: { events: { all(runId: string): { type: string }[] } }, runId: string) =>
  fakes.events.all(runId).map((e) => e.type);

/** The Plan step's output, checked to be the outcome the test expects (and typed as it). */
export function planOutcome<N extends PlanOutput["next"]>(output: PlanOutput, next: N): Extract<PlanOutput, { next: N }> {
  expect(output.next).toBe(next);
  return output as Extract<PlanOutput, { next: N }>;
}
