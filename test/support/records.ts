import type { Interrupt } from "../../shared/contracts/interrupts.js";
import { emptyUsage, type RunRecord } from "../../shared/contracts/run.js";

/** A run record as submitRun writes it, with `fields` changed. */
export function runRecord(runId: string, fields: Partial<RunRecord> = {}): RunRecord {
  const now = new Date().toISOString();
  return {
    schemaVersion: 1,
    runId,
    tenantId: "tenant_1",
    sessionId: "ses_1",
    status: "queued",
    requestedMode: "react",
    input: "What is 2+2?",
    metadata: {},
    usage: emptyUsage(),
    executionArn: `arn:aws:states:us-east-1:000000000000:execution:Stepwise:${runId}`,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}

/** A pending interrupt as a step opens it. */
export function pendingInterrupt(runId: string, interruptId: string, fields: Partial<Interrupt> = {}): Interrupt {
  return {
    schemaVersion: 1,
    interruptId,
    runId,
    kind: "tool_approval",
    status: "pending",
    summary: "Run write_artifact",
    toolName: "write_artifact",
    arguments: { filename: "a.md", content: "x" },
    createdAt: new Date().toISOString(),
    ...fields,
  } as Interrupt;
}
