import type { Interrupt, Resolution } from "../contracts/interrupts.js";

/**
 * The interrupts port: questions and approvals a run waits on, and the task token of the waiting
 * callback state. Each status change is pending → something, once. Adapter: InterruptStore
 * (DynamoDB); fake: shared/testing/memoryInterrupts.ts.
 */
export interface Interrupts {
  /** Creates it unless it exists (ids are deterministic: a retried step finds its own). */
  open(interrupt: Interrupt): Promise<{ created: boolean; interrupt: Interrupt }>;
  get(runId: string, interruptId: string): Promise<Interrupt | undefined>;
  getWithToken(runId: string, interruptId: string): Promise<{ interrupt: Interrupt; taskToken?: string } | undefined>;
  list(runId: string): Promise<Interrupt[]>;
  /** Stores the waiting task's token; the interrupt as it stands (throws `missingInterrupt` if there is none). */
  attachToken(runId: string, interruptId: string, taskToken: string): Promise<Interrupt>;
  /** pending → resolved, once. False if it was not pending any more. */
  resolve(runId: string, interruptId: string, resolution: Resolution): Promise<boolean>;
  /** pending → status, once. */
  transition(runId: string, interruptId: string, status: Interrupt["status"], extra?: Record<string, unknown>): Promise<boolean>;
}

/** What `attachToken` throws when the interrupt does not exist (a fault of ours: the step that opened it ran first). */
export const missingInterrupt = (runId: string, interruptId: string) =>
  new Error(`Interrupt ${interruptId} of run ${runId} does not exist`);
