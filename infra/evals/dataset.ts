/**
 * An eval dataset: JSON Lines, one case a line (input, mode, files, saved agent, answers to pauses,
 * expectations). A line that does not parse or fit becomes a problem naming its line; the other
 * cases still run.
 */
import { z } from "zod";
import { AgentName, AgentRef, Instructions, SaveAgentRequest } from "../../shared/contracts/agents.js";
import { ApprovalPolicy } from "../../shared/contracts/interrupts.js";
import { RequestedMode, RunStatus } from "../../shared/contracts/run.js";
import { AnswerExpectation, expectationProblems } from "./checks.js";
import { badPatterns, TrajectoryExpectation } from "./trajectory.js";

/** How the runner answers the run's pauses, in order: approve, reject or answer (with a message). */
const Decision = z.strictObject({
  decision: z.enum(["approve", "reject", "answer"]),
  message: z.string().min(1).optional(),
});

export const EvalCase = z.strictObject({
  /** The case's name in the report (default: "line N"); --compare pairs cases by it. */
  id: z.string().min(1).max(200).optional(),
  input: z.string().trim().min(1),
  mode: RequestedMode.optional(),
  /** Files to upload for the run: paths relative to the dataset's folder. */
  files: z.array(z.string().min(1)).max(20).optional(),
  /** A saved agent: its name (`analyst`, `analyst@3`), or a configuration saved under `name` before the run. */
  agent: z.union([AgentRef, SaveAgentRequest.extend({ name: AgentName })]).optional(),
  instructions: Instructions.optional(),
  approval: ApprovalPolicy.optional(),
  decisions: z.array(Decision).optional(),
  expect: AnswerExpectation.extend({
    /** The status the run ends in (default succeeded). */
    status: RunStatus.default("succeeded"),
    trajectory: TrajectoryExpectation.optional(),
  }).default({ status: "succeeded" }),
});
export type EvalCase = z.infer<typeof EvalCase> & { id: string; line: number };

export interface DatasetProblem {
  line: number;
  message: string;
}

export interface Dataset {
  cases: EvalCase[];
  problems: DatasetProblem[];
}

export function parseDataset(text: string): Dataset {
  const cases: EvalCase[] = [];
  const problems: DatasetProblem[] = [];
  const ids = new Set<string>();
  text.split(/\r?\n/).forEach((raw, index) => {
    if (raw.trim() === "") return;
    const line = index + 1;
    const parsed = parseLine(raw, ids);
    if (typeof parsed === "string") problems.push({ line, message: parsed });
    else {
      const id = parsed.id ?? `line ${line}`;
      ids.add(id);
      cases.push({ ...parsed, id, line });
    }
  });
  return { cases, problems };
}

/** One line as a case, or what is wrong with it. */
function parseLine(raw: string, earlierIds: ReadonlySet<string>): z.infer<typeof EvalCase> | string {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    return `not JSON: ${(error as Error).message}`;
  }
  const parsed = EvalCase.safeParse(json);
  if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join(".") || "the line"}: ${i.message}`).join("; ");
  const { expect, id } = parsed.data;
  const compileProblems = [...expectationProblems(expect), ...badPatterns(expect.trajectory?.calls ?? [])];
  if (compileProblems.length > 0) return compileProblems.join("; ");
  if (id !== undefined && earlierIds.has(id)) return `the id ${JSON.stringify(id)} is used by an earlier line`;
  return parsed.data;
}
