import { createHash } from "node:crypto";
import { journalKey, journalPk, journalPrefix } from "../ports/journal.js";

/** Every key shape of the single table, in one place (DESIGN §4). */
const pad = (n: number, width: number) => String(n).padStart(width, "0");

export const keys = {
  /** The run's partition: its record and what `GET /v1/runs/{id}` shows (tasks, files, interrupts), read in one Query. */
  runPk: (runId: string) => `RUN#${runId}`,
  run: (runId: string) => ({ pk: `RUN#${runId}`, sk: "META" }),
  /** Events and the journal grow with the run: each has a partition of its own, so the run's stays small. */
  eventsPk: (runId: string) => `RUN#${runId}#EVT`,
  event: (runId: string, seq: number) => ({ pk: `RUN#${runId}#EVT`, sk: `EVT#${pad(seq, 10)}` }),
  eventPrefix: "EVT#",
  eventSk: (seq: number) => `EVT#${pad(seq, 10)}`,
  /** The log's counter: the last number taken, and whether the terminal event has closed the log (outside the EVT# range). */
  eventCounter: (runId: string) => ({ pk: `RUN#${runId}#EVT`, sk: "SEQ" }),
  /** Where a keyed append records the number it took (outside the EVT# range the log reads). */
  eventKey: (runId: string, key: string) => ({ pk: `RUN#${runId}#EVT`, sk: `EVTKEY#${createHash("sha256").update(key).digest("hex")}` }),
  journalPk,
  journal: journalKey,
  journalPrefix,
  task: (runId: string, iteration: number, taskId: string) => ({ pk: `RUN#${runId}`, sk: `TASK#${pad(iteration, 3)}#${taskId}` }),
  step: (runId: string, iteration: number) => ({ pk: `RUN#${runId}`, sk: `STEP#${pad(iteration, 3)}` }),
  taskPrefix: (iteration?: number) => (iteration === undefined ? "TASK#" : `TASK#${pad(iteration, 3)}#`),
  // "ART#": files were called artifacts when the first ones were stored.
  file: (runId: string, name: string) => ({ pk: `RUN#${runId}`, sk: `ART#${name}` }),
  filePrefix: "ART#",
  interrupt: (runId: string, interruptId: string) => ({ pk: `RUN#${runId}`, sk: `INT#${interruptId}` }),
  interruptPrefix: "INT#",
  /** A session is scoped by tenant: two tenants choosing the same session id never meet. */
  sessionPk: (tenantId: string, sessionId: string) => `SESSION#${tenantId}#${sessionId}`,
  session: (tenantId: string, sessionId: string) => ({ pk: `SESSION#${tenantId}#${sessionId}`, sk: "META" }),
  sessionTurn: (tenantId: string, sessionId: string, turn: number) => ({ pk: `SESSION#${tenantId}#${sessionId}`, sk: `TURN#${pad(turn, 8)}` }),
  sessionTurnPrefix: "TURN#",
  tenantSettings: (tenantId: string) => ({ pk: `TENANT#${tenantId}`, sk: "SETTINGS" }),
  apiKey: (hash: string) => ({ pk: `APIKEY#${hash}`, sk: "META" }),
  tenantRun: (tenantId: string, createdAt: string, runId: string) => ({ pk: `TENANT#${tenantId}`, sk: `RUN#${createdAt}#${runId}` }),
};
