// After a person rejects a plan with a reason, the planner revises it visibly: it drops the steps
// (or tasks) the reason names, or else adds a step that takes the reason into account.

import { isLongWord, wordsOf } from "../../shared/text/words.js";
import { cut, oneLine } from "./conversation.js";

export interface ShownStep {
  title: string;
  tasks: string[];
  done_when?: string;
}

/** The orchestrator writes: "The user rejected this plan: <reason>. Revise it with the planning tool." */
const REJECTION = /The user rejected this plan(?::\s*([\s\S]*?))?\. Revise it with the planning tool\./;

/** The reason of a plan rejection in the planner's prompt: "" when none was given, undefined when no rejection. */
export function rejectionReason(text: string): string | undefined {
  const match = REJECTION.exec(text);
  return match ? oneLine(match[1] ?? "") : undefined;
}

/** The steps of the plan as formatPlan shows them ("1. [status] title", "   - task", "   done when: …"). */
export function shownSteps(text: string): ShownStep[] {
  const steps: ShownStep[] = [];
  for (const line of text.split(/\r?\n/)) {
    const step = /^\d+\. \[[a-z_]+\] (.+)$/.exec(line);
    const current = steps.at(-1);
    if (step) steps.push({ title: step[1].trim(), tasks: [] });
    else if (current && line.startsWith("   - ")) current.tasks.push(line.slice(5).trim());
    else if (current && line.startsWith("   done when: ")) current.done_when = line.slice(14).trim();
  }
  return steps;
}

const IGNORED = new Set(
  "please dont don't without need want instead this that with plan step steps task tasks more less just only skip drop remove should would could there their them then than also make have from into about write add need any the".split(
    " ",
  ),
);

/** The words of a text that can name a step ("reports" names "report"). */
function words(text: string): Set<string> {
  return new Set(
    wordsOf(text)
      .map((word) => word.text)
      .filter((w) => isLongWord(w, 4) && !IGNORED.has(w))
      .map((w) => w.replace(/(?:es|s)$/, "")),
  );
}

const names = (reason: Set<string>, text: string) => [...words(text)].some((w) => reason.has(w));

/** The plan's steps revised for the reason. */
export function reviseSteps(steps: ShownStep[], reason: string): { steps: ShownStep[]; change: string } {
  const said = words(reason);
  // A step is named by its title, or when every one of its tasks is named.
  const kept = steps.filter((s) => !(names(said, s.title) || s.tasks.every((t) => names(said, t))));
  if (said.size && kept.length > 0 && kept.length < steps.length) {
    return {
      steps: kept,
      change: `dropped ${steps
        .filter((s) => !kept.includes(s))
        .map((s) => `"${s.title}"`)
        .join(", ")}`,
    };
  }
  const trimmed = steps.map((s) => ({ ...s, tasks: s.tasks.length > 1 ? s.tasks.filter((t) => !names(said, t)) : s.tasks }));
  const dropped = steps.flatMap((s, i) => s.tasks.filter((t) => !trimmed[i].tasks.includes(t)));
  if (said.size && dropped.length > 0 && trimmed.every((s) => s.tasks.length > 0)) {
    return {
      steps: trimmed,
      change: `dropped the task${dropped.length > 1 ? "s" : ""} ${dropped.map((t) => `"${cut(t, 60)}"`).join(", ")}`,
    };
  }
  const note = cut(reason || "the plan was rejected without a reason", 200);
  const added = {
    title: `Address the feedback: ${cut(note, 120)}`,
    tasks: [`Take this feedback into account: "${note}"`],
    done_when: "The feedback is addressed.",
  };
  return { steps: [...steps, added], change: `added the step "${added.title}"` };
}
