import { ANSWERED } from "../../shared/contracts/answers.js";

/**
 * How a fork's edits are written by a person (the console's "Fork from here" editor): a plan as
 * plain text, an answer to a question without the words the tool wraps it in. The API checks the
 * limits (steps, tasks, lengths) and names what does not fit; here only the shape is read.
 */

/** A plan's step as a fork's plan edit carries it (the planning tool's names). */
export interface PlanStepEdit {
  title: string;
  tasks: string[];
  done_when?: string;
}

const TASK = /^\s*[-*]\s+/;
const DONE_WHEN = /^\s*done when:\s*/i;

/**
 * A plan as text: a step per block, blocks apart by an empty line; the block's first line is the
 * step's title, each "- " line a task of the step (they run side by side), "done when: …" its check.
 */
export function planText(steps: readonly PlanStepEdit[]): string {
  return steps
    .map((step) =>
      [step.title, ...step.tasks.map((task) => `- ${task}`), ...(step.done_when ? [`done when: ${step.done_when}`] : [])].join("\n"),
    )
    .join("\n\n");
}

/** The steps the text describes (see planText), or what keeps it from being a plan, naming the step. */
export function parsePlanText(text: string): { steps: PlanStepEdit[] } | { problem: string } {
  const blocks = text
    .replace(/\r\n?/g, "\n")
    .split(/\n\s*\n/)
    .map((block) => block.split("\n").filter((line) => line.trim()))
    .filter((lines) => lines.length > 0);
  if (blocks.length === 0)
    return { problem: "The plan has no step: write a step's title, then its tasks, each on a line starting with “- ”." };
  const steps: PlanStepEdit[] = [];
  for (const [i, lines] of blocks.entries()) {
    const [title, ...rest] = lines;
    if (TASK.test(title)) return { problem: `Step ${i + 1} has no title: its first line is a task (“- …”).` };
    const tasks = rest.filter((line) => TASK.test(line)).map((line) => line.replace(TASK, "").trim());
    const doneWhen = rest
      .find((line) => DONE_WHEN.test(line))
      ?.replace(DONE_WHEN, "")
      .trim();
    const other = rest.find((line) => !TASK.test(line) && !DONE_WHEN.test(line));
    if (other !== undefined)
      return {
        problem: `Step ${i + 1} (“${title.trim()}”) has a line that is neither a task (“- …”) nor “done when: …”: “${other.trim()}”.`,
      };
    if (tasks.some((task) => !task)) return { problem: `Step ${i + 1} (“${title.trim()}”) has an empty task.` };
    if (tasks.length === 0) return { problem: `Step ${i + 1} (“${title.trim()}”) has no task: add a line starting with “- ”.` };
    steps.push({ title: title.trim(), tasks, ...(doneWhen ? { done_when: doneWhen } : {}) });
  }
  return { steps };
}

/** A question's recorded result as the person's answer alone. */
export const answerOf = (output: string) => (output.startsWith(ANSWERED) ? output.slice(ANSWERED.length) : output);
