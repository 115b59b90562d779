import { createHash } from "node:crypto";
import type { JournalCall, JournalKind } from "../ports/journal.js";
import type { ListingPosition } from "../ports/listings.js";

/**
 * Every key shape of the single table, in one place: the adapters in this folder build
 * keys only through these functions, and nothing outside it knows a key.
 */
const pad = (n: number, width: number) => String(n).padStart(width, "0");
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * How many partitions of the listing index one tenant's runs (and its sessions) are spread over,
 * so that one tenant's runs in flight stay under a partition's 1,000 writes/s (docs/capacity.md).
 * A deployment constant: lowering it hides what the shards dropped hold (docs/operating.md).
 */
export const LISTING_SHARDS = 16;

/** The shard a run's or a session's listing item is in: from its id's hash, so ids made at once spread evenly. */
export const listingShard = (id: string) => Number.parseInt(sha256(id).slice(0, 8), 16) % LISTING_SHARDS;

/**
 * The index the listings query: `listPk` = TENANT#<t>#RUNS#<shard> | TENANT#<t>#SESSIONS#<shard>,
 * `listSk` = <createdAt>#<id>. What was listed before the index was sharded is under
 * TENANT#<t>#RUNS and TENANT#<t>#SESSIONS.
 */
const listPk = (tenantId: string, what: "RUNS" | "SESSIONS", shard?: number) =>
  `TENANT#${tenantId}#${what}${shard === undefined ? "" : `#${shard}`}`;
/** Each shard's partition, then the one written before sharding. */
const listPks = (tenantId: string, what: "RUNS" | "SESSIONS") => [
  ...Array.from({ length: LISTING_SHARDS }, (_, shard) => listPk(tenantId, what, shard)),
  listPk(tenantId, what),
];

export const keys = {
  /** The run's partition: its record and what `GET /v1/runs/{id}` shows (tasks, files, interrupts), read in one Query. */
  runPk: (runId: string) => `RUN#${runId}`,
  /** What every run's partition key starts with (recovery scans the local table for runs in flight). */
  runPkPrefix: "RUN#",
  run: (runId: string) => ({ pk: `RUN#${runId}`, sk: "META" }),
  /** The sort key of a run's, a session's, an API key's record. */
  metaSk: "META",
  /** Events and the journal grow with the run: each has a partition of its own, so the run's stays small. */
  eventsPk: (runId: string) => `RUN#${runId}#EVT`,
  event: (runId: string, seq: number) => ({ pk: `RUN#${runId}#EVT`, sk: `EVT#${pad(seq, 10)}` }),
  eventPrefix: "EVT#",
  eventSk: (seq: number) => `EVT#${pad(seq, 10)}`,
  /** The log's counter: the last number taken, and whether the terminal event has closed the log (outside the EVT# range). */
  eventCounter: (runId: string) => ({ pk: `RUN#${runId}#EVT`, sk: "SEQ" }),
  /** Where a keyed append records the number it took (outside the EVT# range the log reads). */
  eventKey: (runId: string, key: string) => ({ pk: `RUN#${runId}#EVT`, sk: `EVTKEY#${sha256(key)}` }),
  /**
   * The journal's partition. A record's sort key is `JRN#<scope>#<round, 4 digits>#<kind>[#<call id>]`
   * (`JRN#task#0#s1.t1#0003#tool#call_1`): a scope's keys, and those of the scopes within it, share
   * a prefix, and sort by round.
   */
  journalPk: (runId: string) => `RUN#${runId}#JRN`,
  journal: (runId: string, { scope, round, kind, callId }: JournalCall) => ({
    pk: `RUN#${runId}#JRN`,
    sk: `JRN#${scope}#${pad(round, 4)}#${kind}${callId ? `#${callId}` : ""}`,
  }),
  /** What the keys of a scope's records, and of the scopes within it, start with ("plan#2" holds "plan#2#r1"). */
  journalScopePrefix: (scope: string) => `JRN#${scope}#`,
  /** Every record of the run's journal, of every scope. */
  journalRunPrefix: "JRN#",
  /** The call a journal sort key names (the first `#<digits>#<kind>` ends the scope: scopes are ours, call ids the model's). */
  journalCallOf: (sk: string): JournalCall => {
    const [, scope, round, kind, callId] = /^JRN#(.+?)#(\d{4,})#(llm|tool|intent|memo|attempt)(?:#([\s\S]*))?$/.exec(sk) ?? [];
    if (scope === undefined) throw new Error(`Not a journal record's key: ${sk}`);
    return { scope, round: Number(round), kind: kind as JournalKind, ...(callId ? { callId } : {}) };
  },
  /** Part i (from 1) of a journal record too large for one item: the first part is the record's own item. */
  journalPart: (sk: string, i: number) => `${sk}#~part${String(i).padStart(3, "0")}`,
  task: (runId: string, iteration: number, taskId: string) => ({ pk: `RUN#${runId}`, sk: `TASK#${pad(iteration, 3)}#${taskId}` }),
  step: (runId: string, iteration: number) => ({ pk: `RUN#${runId}`, sk: `STEP#${pad(iteration, 3)}` }),
  taskPrefix: (iteration?: number) => (iteration === undefined ? "TASK#" : `TASK#${pad(iteration, 3)}#`),
  // "ART#": files were called artifacts when the first ones were stored.
  file: (runId: string, name: string) => ({ pk: `RUN#${runId}`, sk: `ART#${name}` }),
  filePrefix: "ART#",
  interrupt: (runId: string, interruptId: string) => ({ pk: `RUN#${runId}`, sk: `INT#${interruptId}` }),
  interruptPrefix: "INT#",
  /** A webhook delivery of a run's end. */
  delivery: (runId: string, deliveryId: string) => ({ pk: `RUN#${runId}`, sk: `WHK#${deliveryId}` }),
  deliveryPrefix: "WHK#",
  /** A run's note that one of its tool sources was unreachable (announced once). */
  sourceUnavailable: (runId: string, source: string) => ({ pk: `RUN#${runId}`, sk: `SRCDOWN#${source}` }),
  /** A session is scoped by tenant: two tenants choosing the same session id never meet. */
  sessionPk: (tenantId: string, sessionId: string) => `SESSION#${tenantId}#${sessionId}`,
  sessionPkPrefix: "SESSION#",
  /** The tenant and session of a session partition key (tenant ids hold no "#"). */
  sessionOfPk: (pk: string) => {
    const [, tenantId, sessionId] = /^SESSION#([^#]+)#(.+)$/.exec(pk) ?? [];
    return { tenantId: tenantId ?? "", sessionId: sessionId ?? "" };
  },
  session: (tenantId: string, sessionId: string) => ({ pk: `SESSION#${tenantId}#${sessionId}`, sk: "META" }),
  sessionTurn: (tenantId: string, sessionId: string, turn: number) => ({
    pk: `SESSION#${tenantId}#${sessionId}`,
    sk: `TURN#${pad(turn, 8)}`,
  }),
  sessionTurnPrefix: "TURN#",
  /** Session messages written before turns were items of their own (read, never written). */
  sessionMessagePrefix: "MSG#",
  tenantPk: (tenantId: string) => `TENANT#${tenantId}`,
  tenantSettings: (tenantId: string) => ({ pk: `TENANT#${tenantId}`, sk: "SETTINGS" }),
  /** The tenant's count of active runs (its concurrency slots). */
  activeRuns: (tenantId: string) => ({ pk: `TENANT#${tenantId}`, sk: "ACTIVE_RUNS" }),
  /** One of the tenant's slots of a kind of lease (a code sandbox running, an open stream; shared/ports/tenantLeases.ts). */
  tenantLease: (tenantId: string, kind: string, slot: number) => ({ pk: `TENANT#${tenantId}`, sk: `LEASE#${kind}#${pad(slot, 4)}` }),
  tenantLeasePrefix: (kind: string) => `LEASE#${kind}#`,
  /** What judging the tenant's runs cost on one UTC day (online evals' cost cap). */
  evalSpend: (tenantId: string, day: string) => ({ pk: `TENANT#${tenantId}`, sk: `EVALSPEND#${day}` }),
  /** A run's spend counter against its own budget (written only when the run has one). */
  runSpend: (runId: string) => ({ pk: `RUN#${runId}`, sk: "SPEND" }),
  /** The tenant's spend in one day (`2026-11-28`) or month (`2026-11`), written only when the tenant has that budget. */
  tenantSpend: (tenantId: string, period: string) => ({ pk: `TENANT#${tenantId}`, sk: `SPEND#${period}` }),
  webhookSecrets: (tenantId: string) => ({ pk: `TENANT#${tenantId}`, sk: "WEBHOOK_SECRETS" }),
  webhookEndpoint: (tenantId: string, url: string) => ({ pk: `TENANT#${tenantId}`, sk: `ENDPOINT#${sha256(url).slice(0, 32)}` }),
  toolSource: (tenantId: string, name: string) => ({ pk: `TENANT#${tenantId}`, sk: `TOOLSRC#${name}` }),
  toolSourcePrefix: "TOOLSRC#",
  /** One version of a saved agent: its versions sort in order after the name's prefix. */
  savedAgent: (tenantId: string, name: string, version: number) => ({ pk: `TENANT#${tenantId}`, sk: `AGENT#${name}#v${pad(version, 9)}` }),
  /** Every saved agent's versions, or one agent's ("#" ends a name, so `analyst` never reads `analyst-2`). */
  savedAgentPrefix: (name?: string) => (name === undefined ? "AGENT#" : `AGENT#${name}#v`),
  /** One version of a tool policy: its versions sort in order after the name's prefix. */
  toolPolicy: (tenantId: string, name: string, version: number) => ({ pk: `TENANT#${tenantId}`, sk: `POLICY#${name}#v${pad(version, 9)}` }),
  /** Every policy's versions, or one policy's ("#" ends a name). */
  toolPolicyPrefix: (name?: string) => (name === undefined ? "POLICY#" : `POLICY#${name}#v`),
  upload: (tenantId: string, fileId: string) => ({ pk: `TENANT#${tenantId}`, sk: `UPLOAD#${fileId}` }),
  /** The key's hash, not the key: a client's key can be long and holds whatever the client put in it. */
  idempotencyClaim: (tenantId: string, key: string) => ({ pk: `TENANT#${tenantId}`, sk: `IDEM#${sha256(key)}` }),
  /** What `GET /health` reads to see the table answer (no item is there). */
  healthProbe: { pk: "HEALTH", sk: "META" },
  apiKey: (hash: string) => ({ pk: `APIKEY#${hash}`, sk: "META" }),
  /** A stream token is stored by its hash: the table never holds one that works. */
  streamToken: (token: string) => ({ pk: `STREAMTOKEN#${sha256(token)}`, sk: "META" }),
  /** The listing index's keys, carried by run items and session META items. */
  runListing: (run: { tenantId: string; createdAt: string; runId: string }) => ({
    listPk: listPk(run.tenantId, "RUNS", listingShard(run.runId)),
    listSk: keys.listSkOf({ createdAt: run.createdAt, id: run.runId }),
  }),
  sessionListing: (tenantId: string, createdAt: string, sessionId: string) => ({
    listPk: listPk(tenantId, "SESSIONS", listingShard(sessionId)),
    listSk: keys.listSkOf({ createdAt, id: sessionId }),
  }),
  /** Every partition a tenant's runs are listed in. */
  runsListPks: (tenantId: string) => listPks(tenantId, "RUNS"),
  /** Every partition a tenant's sessions are listed in. */
  sessionsListPks: (tenantId: string) => listPks(tenantId, "SESSIONS"),
  /** Where a listing's page ended, from the last item's `listSk`. */
  listingPositionOf: (listSk: string): ListingPosition => ({
    createdAt: listSk.slice(0, listSk.indexOf("#")),
    id: listSk.slice(listSk.indexOf("#") + 1),
  }),
  /** A listing position as the index's sort key. */
  listSkOf: ({ createdAt, id }: ListingPosition) => `${createdAt}#${id}`,
};
