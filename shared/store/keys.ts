import { createHash } from "node:crypto";
import { journalKey, journalPrefix } from "../ports/journal.js";

/** Every key shape of the single table, in one place (DESIGN §4). */
const pad = (n: number, width: number) => String(n).padStart(width, "0");

export const keys = {
  run: (runId: string) => ({ pk: `RUN#${runId}`, sk: "META" }),
  event: (runId: string, seq: number) => ({ pk: `RUN#${runId}`, sk: `EVT#${pad(seq, 10)}` }),
  eventPrefix: "EVT#",
  eventSk: (seq: number) => `EVT#${pad(seq, 10)}`,
  /** Where a keyed append records the number it took (outside the EVT# range the log reads). */
  eventKey: (runId: string, key: string) => ({ pk: `RUN#${runId}`, sk: `EVTKEY#${createHash("sha256").update(key).digest("hex")}` }),
  journal: journalKey,
  journalPrefix,
  task: (runId: string, iteration: number, taskId: string) => ({ pk: `RUN#${runId}`, sk: `TASK#${pad(iteration, 3)}#${taskId}` }),
  step: (runId: string, iteration: number) => ({ pk: `RUN#${runId}`, sk: `STEP#${pad(iteration, 3)}` }),
  taskPrefix: (iteration?: number) => (iteration === undefined ? "TASK#" : `TASK#${pad(iteration, 3)}#`),
  // "ART#": files were called artifacts when the first ones were stored.
  file: (runId: string, name: string) => ({ pk: `RUN#${runId}`, sk: `ART#${name}` }),
  filePrefix: "ART#",
  apiKey: (hash: string) => ({ pk: `APIKEY#${hash}`, sk: "META" }),
  tenantRun: (tenantId: string, createdAt: string, runId: string) => ({ pk: `TENANT#${tenantId}`, sk: `RUN#${createdAt}#${runId}` }),
};
