/**
 * `npm run bench -- capacity`: capacity on paper. Measures W1 and W16 on the local stack (state
 * transitions, Lambda invocations and their time, DynamoDB requests by operation, per run), then
 * says, at 1,000 and 10,000 runs in flight at once, how much of each AWS quota they use and which
 * binds first, and what 1,000 runs cost on AWS without the model's tokens.
 *
 * Quotas are AWS's documented defaults for us-east-1 (2026; new accounts start lower and AWS raises
 * them with use); prices are us-east-1 on-demand, arm64. A real model's latency sets how long a run
 * lasts (MODEL_SECONDS per call on the critical path, default 3 s) and how long agent functions wait.
 */
import { newId } from "../../shared/run/submit.js";
import { LISTING_SHARDS, listingShard } from "../../shared/store/keys.js";
import { benchWorkload, criticalCalls, W1, W16, type Workload, type WorkloadReport } from "./workloads.js";

const MODEL_SECONDS = Number(process.env.MODEL_SECONDS ?? 3);
/** People watching each run live: each watcher holds one stream function and polls the log. */
const WATCHERS_PER_RUN = Number(process.env.WATCHERS_PER_RUN ?? 1);
/** The stream polls the event log every STREAM_POLL_MS (250 ms) while nothing new arrives. */
const STREAM_READS_PER_SECOND = 1000 / Number(process.env.STREAM_POLL_MS ?? 250);
const MEMORY_GB = 0.5;

/** us-east-1 defaults. Token-bucket quotas are given by their refill rate (the sustained rate). */
const QUOTAS = {
  startExecution: {
    perSecond: 300,
    name: "Step Functions StartExecution (refill 300/s, bucket 1,300)",
    lift: "a quota increase (Service Quotas), or fewer executions per run",
  },
  transitions: {
    perSecond: 5_000,
    name: "Step Functions state transitions (5,000/s)",
    lift: "a quota increase; fewer, fatter Lambda turns",
  },
  history: {
    perSecond: 20,
    name: "Step Functions GetExecutionHistory (refill 20/s, bucket 400, per account)",
    lift: "a quota increase; fewer counts (the history estimate asks only near an execution's budget)",
  },
  lambda: {
    concurrent: 1_000,
    name: "Lambda concurrent executions (1,000 per Region)",
    lift: "a quota increase (tens of thousands are granted); streams closing sooner (STREAM_MAX_SECONDS)",
  },
  table: {
    perSecond: 40_000,
    name: "DynamoDB on-demand table (40,000 read and 40,000 write units/s)",
    lift: "a table quota increase; fewer stream polls (a longer STREAM_POLL_MS)",
  },
  runListing: {
    perSecond: 1_000,
    name: `one tenant's busiest partition of the run listing (1,000 writes/s; ${LISTING_SHARDS} shards)`,
    lift: "more listing shards (LISTING_SHARDS)",
  },
  sessionListing: {
    perSecond: 1_000,
    name: `one tenant's busiest partition of the session listing (1,000 writes/s; ${LISTING_SHARDS} shards)`,
    lift: "more listing shards (LISTING_SHARDS)",
  },
  httpApi: {
    perSecond: 10_000,
    name: "HTTP API requests (10,000/s per account)",
    lift: "a quota increase; streams instead of polling GETs",
  },
} as const;

const PRICE = { transition: 0.000025, gbSecond: 0.0000133334, invocation: 0.2 / 1e6, write: 0.625 / 1e6, read: 0.125 / 1e6 };
const READS = new Set(["GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"]);
/** Seconds of starts drawn to find how unevenly run and session ids fall on the listing shards. */
const SHARD_SAMPLE_SECONDS = 200;

/**
 * The busiest listing shard's share of one second's starts, the worst of SHARD_SAMPLE_SECONDS
 * seconds of fresh ids (as runs and sessions get them) at `perSecond` starts a second. Every write
 * of a run is counted in the second it started, which overstates a shard's peak.
 */
function busiestShardShare(perSecond: number): number {
  const n = Math.max(1, Math.round(perSecond));
  let worst = 0;
  for (let s = 0; s < SHARD_SAMPLE_SECONDS; s++) {
    const counts = new Array<number>(LISTING_SHARDS).fill(0);
    for (let i = 0; i < n; i++) counts[listingShard(newId("run"))]!++;
    worst = Math.max(worst, Math.max(...counts) / n);
  }
  return worst;
}
/** API requests a client makes per run besides the stream: submit, one GET at the end. */
const API_REQUESTS_PER_RUN = 2;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface PerRun {
  workload: Workload;
  transitions: number;
  /** GetExecutionHistory calls the stack made for the run. */
  historyCalls: number;
  /** Writes to the run's record and to its session's: each writes the listing index. */
  runListingWrites: number;
  sessionListingWrites: number;
  invocations: number;
  ownLambdaSeconds: number;
  modelCalls: number;
  reads: number;
  writes: number;
  /** How long a run lasts with the model's latency: its model calls one after another, plus Stepwise's own time. */
  seconds: number;
}

function perRun(report: WorkloadReport): PerRun {
  const runs = report.runs;
  const split = runs.map((r) =>
    Object.entries(r.operations).reduce(
      (acc, [op, n]) => {
        if (READS.has(op)) acc.reads += n;
        else acc.writes += n;
        return acc;
      },
      { reads: 0, writes: 0 },
    ),
  );
  const ownSeconds = median(runs.map((r) => r.totalMs)) / 1000;
  return {
    workload: report.workload,
    transitions: median(runs.map((r) => r.stateTransitions)),
    historyCalls: median(runs.map((r) => r.historyCalls)),
    runListingWrites: median(runs.map((r) => r.listingWrites.runs)),
    sessionListingWrites: median(runs.map((r) => r.listingWrites.sessions)),
    invocations: median(runs.map((r) => r.invocations)),
    ownLambdaSeconds: median(runs.map((r) => r.lambdaMs)) / 1000,
    modelCalls: median(runs.map((r) => r.modelCalls)),
    reads: median(split.map((s) => s.reads)),
    writes: median(split.map((s) => s.writes)),
    seconds: ownSeconds + criticalCalls(report.workload) * MODEL_SECONDS,
  };
}

/** Each quota's use at `inFlight` runs at once, as a share of the quota. */
function usage(run: PerRun, inFlight: number) {
  const startsPerSecond = inFlight / run.seconds;
  // Agent functions wait for the model inside the invocation: Lambda time is their own time plus every model call's wait.
  const lambdaSecondsPerRun = run.ownLambdaSeconds + run.modelCalls * MODEL_SECONDS;
  const streamReads = inFlight * WATCHERS_PER_RUN * STREAM_READS_PER_SECOND;
  return [
    { quota: QUOTAS.startExecution, used: startsPerSecond, of: QUOTAS.startExecution.perSecond, unit: "/s" },
    { quota: QUOTAS.transitions, used: (inFlight * run.transitions) / run.seconds, of: QUOTAS.transitions.perSecond, unit: "/s" },
    { quota: QUOTAS.history, used: (inFlight * run.historyCalls) / run.seconds, of: QUOTAS.history.perSecond, unit: "/s" },
    {
      quota: QUOTAS.lambda,
      used: (inFlight * lambdaSecondsPerRun) / run.seconds + inFlight * WATCHERS_PER_RUN,
      of: QUOTAS.lambda.concurrent,
      unit: " at once",
    },
    {
      quota: QUOTAS.table,
      used: Math.max((inFlight * run.reads) / run.seconds + streamReads, (inFlight * run.writes) / run.seconds),
      of: QUOTAS.table.perSecond,
      unit: " units/s",
    },
    {
      quota: QUOTAS.runListing,
      used: startsPerSecond * busiestShardShare(startsPerSecond) * run.runListingWrites,
      of: QUOTAS.runListing.perSecond,
      unit: "/s (one tenant)",
    },
    {
      quota: QUOTAS.sessionListing,
      used: startsPerSecond * busiestShardShare(startsPerSecond) * run.sessionListingWrites,
      of: QUOTAS.sessionListing.perSecond,
      unit: "/s (one tenant)",
    },
    { quota: QUOTAS.httpApi, used: startsPerSecond * API_REQUESTS_PER_RUN, of: QUOTAS.httpApi.perSecond, unit: "/s" },
  ];
}

function costPer1000(run: PerRun): { stepFunctions: number; lambda: number; dynamo: number } {
  const lambdaSeconds = run.ownLambdaSeconds + run.modelCalls * MODEL_SECONDS;
  return {
    stepFunctions: 1000 * run.transitions * PRICE.transition,
    lambda: 1000 * (lambdaSeconds * MEMORY_GB * PRICE.gbSecond + run.invocations * PRICE.invocation),
    dynamo: 1000 * (run.reads * PRICE.read + run.writes * PRICE.write),
  };
}

export async function benchCapacity(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const measured = [perRun(await benchWorkload(W1, { runs, latencyMs: 0 })), perRun(await benchWorkload(W16, { runs, latencyMs: 0 }))];
  console.log(
    `\n# Capacity on paper (${runs} runs each measured locally; model ${MODEL_SECONDS} s per call; ${WATCHERS_PER_RUN} watcher per run)`,
  );
  console.log(
    "| workload | transitions | history calls | invocations | own Lambda s | model calls | table reads | table writes | run record writes | session record writes | lasts |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of measured) {
    console.log(
      `| ${r.workload.name} | ${r.transitions} | ${r.historyCalls} | ${r.invocations} | ${r.ownLambdaSeconds.toFixed(1)} | ${r.modelCalls} | ${r.reads} | ${r.writes} | ${r.runListingWrites} | ${r.sessionListingWrites} | ${r.seconds.toFixed(0)} s |`,
    );
  }
  for (const r of measured) {
    for (const inFlight of [1_000, 10_000]) {
      const rows = usage(r, inFlight).sort((a, b) => b.used / b.of - a.used / a.of);
      console.log(
        `\n${r.workload.name}, ${inFlight.toLocaleString("en-US")} runs in flight: binds first: ${rows[0]!.quota.name} at ${((100 * rows[0]!.used) / rows[0]!.of).toFixed(0)} % (lift: ${rows[0]!.quota.lift})`,
      );
      for (const row of rows)
        console.log(
          `  ${((100 * row.used) / row.of).toFixed(0).padStart(5)} %  ${row.quota.name}: ${Math.round(row.used).toLocaleString("en-US")}${row.unit}`,
        );
    }
  }
  console.log("\n| workload | Step Functions | Lambda | DynamoDB | per 1,000 runs, without the model's tokens |");
  console.log("|---|---|---|---|---|");
  for (const r of measured) {
    const cost = costPer1000(r);
    console.log(
      `| ${r.workload.name} | $${cost.stepFunctions.toFixed(2)} | $${cost.lambda.toFixed(2)} | $${cost.dynamo.toFixed(3)} | $${(cost.stepFunctions + cost.lambda + cost.dynamo).toFixed(2)} |`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCapacity();
