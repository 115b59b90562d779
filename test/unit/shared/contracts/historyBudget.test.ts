import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  agentTurnFits,
  HISTORY_EVENT_LIMIT,
  handBackVerdict,
  MIN_HISTORY_EVENT_BUDGET,
  newExecutionHoldsHandBacks,
} from "../../../../shared/contracts/historyBudget.js";
import { settingsFromEnv } from "../../../../shared/settings.js";

/**
 * The history budget's promises that the integration test cannot sweep: a task deferred to a new
 * execution is not deferred again before it moves on, and a ReAct run always has a next execution.
 * The first events of a continued execution, on AWS: its start (1), "Start run" (5), "Choose mode"
 * (2), then "Execute tasks" started (2) and, per task, its iteration and "Execute task" so far (4);
 * or "Agent turn" so far (3).
 */
const continuedMapBeforeHandBacks = (tasks: number) => 1 + 5 + 2 + 2 + 4 * tasks;
const continuedTurnBeforeHandBack = 1 + 5 + 2 + 3;

describe("history budget", () => {
  it("a task handed to a new execution gets its hand-back there, for any budget and number of tasks waiting", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: MIN_HISTORY_EVENT_BUDGET, max: HISTORY_EVENT_LIMIT }),
        fc.integer({ min: 1, max: 40 }),
        (budget, tasks) => {
          if (!newExecutionHoldsHandBacks(tasks, budget)) return; // the run fails with the budget named instead
          expect(handBackVerdict(continuedMapBeforeHandBacks(tasks), tasks, budget)).toBe("fits");
        },
      ),
    );
  });

  it("a ReAct turn that hands back fits in a new execution whatever the budget", () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_HISTORY_EVENT_BUDGET, max: HISTORY_EVENT_LIMIT }), (budget) => {
        expect(agentTurnFits(continuedTurnBeforeHandBack, budget)).toBe(true);
      }),
    );
  });

  it("the default budget holds 40 tasks waiting at once many times over, and refuses a budget below the bound", () => {
    expect(handBackVerdict(20_000, 40, HISTORY_EVENT_LIMIT)).toBe("fits");
    expect(handBackVerdict(24_500, 40, HISTORY_EVENT_LIMIT)).toBe("new_execution");
    expect(() => settingsFromEnv({ TABLE_NAME: "t", HISTORY_EVENT_BUDGET: String(MIN_HISTORY_EVENT_BUDGET - 1) })).toThrow(
      /HISTORY_EVENT_BUDGET/,
    );
    expect(settingsFromEnv({ TABLE_NAME: "t", HISTORY_EVENT_BUDGET: String(MIN_HISTORY_EVENT_BUDGET) }).budgets.historyEvents).toBe(
      MIN_HISTORY_EVENT_BUDGET,
    );
  });
});
