import { describe, expect, it } from "vitest";
import { stateMachineDefinition, synthesizeStack } from "../../infra/local/synth.js";
import { FINAL_STEP_ERRORS, RETRYABLE_STEP_ERRORS, StepErrorCode } from "../../shared/errors.js";

/** The retry and failure policy of the synthesized state machine (what AWS runs and the local stack too). */
const asl = JSON.parse(stateMachineDefinition(synthesizeStack()).definition);
type State = {
  Type: string;
  Retry?: { ErrorEquals: string[]; IntervalSeconds?: number; MaxAttempts?: number; BackoffRate?: number; JitterStrategy?: string }[];
  [k: string]: any;
};

/** Every state, also those inside the Map, by name. */
function allStates(states: Record<string, State>): [string, State][] {
  return Object.entries(states).flatMap(([name, state]) => [
    [name, state] as [string, State],
    ...(state.ItemProcessor ? allStates(state.ItemProcessor.States) : []),
  ]);
}
const tasks = allStates(asl.States).filter(([, s]) => s.Type === "Task");

describe("retries", () => {
  it("there are Task states, inside the Map too", () => {
    expect(tasks.map(([name]) => name)).toEqual(
      expect.arrayContaining(["Start run", "Execute task", "Record task failure", "Wait for tool approval", "Record failure"]),
    );
  });

  it.each(tasks)(
    "%s retries Lambda throttling, lost invocations and our transient errors, with backoff and full jitter",
    (_name, state) => {
      const retriers = state.Retry ?? [];
      const retried = (error: string) => retriers.find((r) => r.ErrorEquals.includes(error));
      for (const error of ["Lambda.TooManyRequestsException", "Lambda.ServiceException", "Lambda.Unknown", ...RETRYABLE_STEP_ERRORS]) {
        const retrier = retried(error);
        expect(retrier, error).toBeDefined();
        expect(retrier!.MaxAttempts).toBeGreaterThanOrEqual(2);
        expect(retrier!.BackoffRate).toBeGreaterThan(1);
        expect(retrier!.JitterStrategy).toBe("FULL");
      }
    },
  );

  it.each(tasks)("%s does not retry permanent errors, timeouts of people, or everything", (_name, state) => {
    const listed = (state.Retry ?? []).flatMap((r) => r.ErrorEquals);
    for (const error of [
      StepErrorCode.ModelRejected,
      StepErrorCode.InvalidInput,
      StepErrorCode.AgentFailed,
      StepErrorCode.Internal,
      "States.ALL",
      "States.TaskFailed",
      "States.Timeout",
    ]) {
      expect(listed, error).not.toContain(error);
    }
  });
});

describe("a failed run", () => {
  it("ends in 'Run failed' with the real error and cause that 'Record failure' kept", () => {
    expect(asl.States["Record failure"].ResultPath).toBe("$.failure");
    expect(asl.States["Record failure"].Next).toBe("Run failed");
    expect(asl.States["Run failed"]).toEqual({ Type: "Fail", ErrorPath: "$.failure.error", CausePath: "$.failure.cause" });
  });
});

describe("what a redrive can continue", () => {
  it("only errors no retry can change end the run through 'Record failure'; every other error stays at its state", () => {
    const caught = Object.entries(asl.States as Record<string, State>).flatMap(([name, state]) =>
      ((state.Catch ?? []) as { ErrorEquals: string[]; Next: string }[])
        .filter((c) => c.Next === "Record failure")
        .map((c) => [name, c.ErrorEquals] as const),
    );
    expect(caught.length).toBeGreaterThan(5);
    for (const [name, errors] of caught) expect([...errors].sort(), name).toEqual([...FINAL_STEP_ERRORS].sort());
    expect(FINAL_STEP_ERRORS).not.toContain(StepErrorCode.ModelRejected);
    expect(FINAL_STEP_ERRORS).not.toContain(StepErrorCode.Internal);
  });

  it("a task's failure of any kind stays inside its Map iteration", () => {
    const inner = asl.States["Execute tasks"].ItemProcessor.States;
    expect(inner["Execute task"].Catch).toEqual([expect.objectContaining({ ErrorEquals: ["States.ALL"], Next: "Record task failure" })]);
  });
});
