import type { RunView } from "../../shared/contracts/responses.js";

/** Where a fork branched from its parent, as the CLI and the console say it: "task#1#s2.t1 round 1". */
export function forkPointText(at: NonNullable<RunView["forkOf"]>["at"]): string {
  return `${at.scope} round ${at.round}`;
}
