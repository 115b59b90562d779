/**
 * Why a task is not done as planned, in words ("the user rejected write_artifact"): one wording for
 * the planner, the CLI and the console. Free of zod, so the console bundles it without it.
 */
export function undoneText(undone: readonly { tool: string; decision: "reject" | "skip" }[]): string {
  return `the user ${undone.map((u) => `${u.decision === "reject" ? "rejected" : "skipped"} ${u.tool}`).join(", ")}`;
}
