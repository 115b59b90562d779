import * as z from "zod";
import { formatPlan, type Plan, StepStatus } from "../contracts/plan.js";
import { clip } from "../memory/share.js";
import { defineTool } from "./tool.js";

const StepInput = z.union([
  z.string().min(1).max(2000),
  z.object({
    title: z.string().min(1).max(500),
    tasks: z.array(z.string().min(1).max(2000)).max(40).optional(),
    done_when: z.string().max(1000).optional(),
  }),
]);

export const PlanningArgs = z.object({
  command: z.enum(["create", "update", "mark_step", "check", "finish"]),
  title: z.string().max(500).optional(),
  steps: z.array(StepInput).min(1).max(50).optional().describe("each step's tasks run in parallel, one executor each"),
  step_index: z.number().int().min(0).optional().describe("0-based"),
  step_status: StepStatus.optional(),
  step_notes: z.string().max(4000).optional(),
  met: z.boolean().optional().describe("check: whether the step's results meet its done_when"),
  reason: z.string().max(1000).optional().describe("check: why, citing the results"),
});
export type PlanningArgs = z.infer<typeof PlanningArgs>;

/** The plan the planner is editing during one "Plan" state. */
export interface PlanBoard {
  plan?: Plan;
}

/**
 * JD Genie's planning tool (create, update, mark_step, finish), extended so a step holds several
 * tasks that run in parallel. `update` keeps the status of steps whose title is unchanged.
 */
export function applyPlanning(current: Plan | undefined, args: PlanningArgs): Plan {
  switch (args.command) {
    case "create":
    case "update": {
      if (!args.steps) throw new Error(`${args.command} needs steps`);
      if (args.command === "update" && !current) throw new Error("there is no plan to update; use create");
      const previous = new Map(current?.steps.map((s) => [s.title, s]) ?? []);
      const steps = args.steps.map((input) => {
        const step =
          typeof input === "string"
            ? { title: input.slice(0, 500), tasks: [input] }
            : { ...input, tasks: input.tasks?.length ? input.tasks : [input.title] };
        const kept = args.command === "update" ? previous.get(step.title) : undefined;
        return {
          title: step.title,
          tasks: step.tasks,
          doneWhen: "done_when" in step ? step.done_when : undefined,
          status: kept?.status ?? "not_started",
          notes: kept?.notes,
          ...(kept?.verdict ? { verdict: kept.verdict } : {}),
          ...(kept?.undone ? { undone: kept.undone } : {}),
        };
      });
      return { title: args.title ?? current?.title ?? "Plan", steps, finished: false };
    }
    case "mark_step": {
      if (!current) throw new Error("there is no plan yet; use create");
      const index = args.step_index;
      if (index === undefined || !current.steps[index]) throw new Error(`step_index must be between 0 and ${current.steps.length - 1}`);
      const steps = current.steps.map((step, i) =>
        i === index ? { ...step, status: args.step_status ?? "completed", notes: args.step_notes ?? step.notes } : step,
      );
      return { ...current, steps };
    }
    case "check": {
      if (!current) throw new Error("there is no plan yet; use create");
      const index = args.step_index;
      if (index === undefined || !current.steps[index]) throw new Error(`step_index must be between 0 and ${current.steps.length - 1}`);
      if (args.met === undefined) throw new Error("check needs met: true when the results meet the step's done_when, false when not");
      // A step not met is not completed: it is revised (update) and runs again.
      const verdict = { met: args.met, reason: clip(args.reason ?? "", 1000) };
      return {
        ...current,
        steps: current.steps.map((step, i) =>
          i === index ? { ...step, verdict, status: args.met ? ("completed" as const) : ("in_progress" as const) } : step,
        ),
      };
    }
    case "finish":
      if (!current) throw new Error("there is no plan to finish");
      return { ...current, finished: true };
  }
}

export function planningTool(board: PlanBoard) {
  return defineTool({
    name: "planning",
    persona: "Project planner",
    description:
      "Create and maintain the plan. create: a title and steps, each step {title, tasks[], done_when}; the tasks of one step run in parallel. update: replace the steps (unchanged titles keep their status). mark_step: set step_index's step_status (not_started, in_progress, completed, blocked) and step_notes. check: judge step_index's results against its done_when (met true or false, reason); a step not met is revised with update and runs again. finish: the request is answered.",
    access: "read",
    pure: true,
    parameters: PlanningArgs,
    async run(args) {
      board.plan = applyPlanning(board.plan, args);
      return args.command === "finish" ? "The plan is finished." : formatPlan(board.plan);
    },
  });
}
