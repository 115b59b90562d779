import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { DescribeStateMachineCommand, SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StepName } from "../../infra/aws/handlers.js";
import { type CachedDefinition, localDefinition as cachedLocalDefinition, definitionHash } from "../../infra/local/definitionCache.js";
import { stateMachineDefinition } from "../../infra/local/synth.js";
import { FINAL_STEP_ERRORS } from "../../shared/errors.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * Parity: the ASL the local stack runs is byte for byte the ASL `cdk synth` deploys.
 * Three definitions are compared: the real CDK CLI's template (resolved to local ARNs), what the
 * running local Step Functions endpoint reports via DescribeStateMachine (read from the cache
 * the stack starts from), and the in-process synthesis, written to a cache and read back. Then
 * the structure users rely on is checked.
 */
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");

let outDir: string;
let stack: RunningStack;
let cliDefinition: string;
let localDefinition: string;
let runningDefinition: string;
let asl: any;
let cacheDir: string;
let fresh: CachedDefinition;
let reread: CachedDefinition;
let steps: Map<string, StepName>;

beforeAll(async () => {
  outDir = await mkdtemp(path.join(tmpdir(), "stepwise-synth-"));
  // A model endpoint is required at synth; it sets only the functions' environment, not the ASL.
  // `cdk list` runs the app through the same CLI and writes the template as `cdk synth` does, only
  // without bundling each function's code (a minute and a half of esbuild): the bundles' hashes name
  // the code's S3 keys and the versions' logical ids, which the definition resolves by function.
  const synth = run("npx", ["cdk", "list", "--no-notices", "-c", "openAiBaseUrl=https://models.example.com/v1", "--output", outDir], {
    cwd: root,
    // The deploy-time settings that would change the template are left at their defaults, as the local stack does.
    // CDK_VALIDATION=false skips aws-cdk-lib's CloudFormation template check, which only writes a report
    // beside the template (not read here) and took two thirds of the command's CPU (its WebAssembly engine).
    env: { ...process.env, OPENAI_API_KEY: "", OPENAI_BASE_URL: "", STEPWISE_MODEL: "", CDK_VALIDATION: "false" },
    maxBuffer: 64 * 1024 * 1024,
  });
  const started = startStack({}, [], { exposeEndpoints: true });
  const [, running] = await Promise.all([synth, started]);
  stack = running;

  const template = JSON.parse(await readFile(path.join(outDir, "Stepwise.template.json"), "utf8"));
  // The in-process synthesis the local stack uses, written to a fresh cache and read back from it.
  cacheDir = await mkdtemp(path.join(tmpdir(), "stepwise-asl-cache-"));
  fresh = await cachedLocalDefinition({}, cacheDir);
  reread = await cachedLocalDefinition({}, cacheDir);
  localDefinition = fresh.definition;
  // Logical id → step, from the local ARNs (arn:…:function:<logical id>:<version>); logical ids are deterministic.
  steps = new Map([...fresh.functions].map(([arn, step]) => [arn.split(":function:")[1]!.split(":")[0]!, step]));
  cliDefinition = stateMachineDefinition({ template, steps }).definition;

  const endpoints = stack.endpoints!;
  const sfn = new SFNClient({ endpoint: endpoints.sfn, region: endpoints.region, credentials: endpoints.credentials });
  const described = await sfn.send(new DescribeStateMachineCommand({ stateMachineArn: endpoints.stateMachineArn }));
  sfn.destroy();
  runningDefinition = described.definition!;
  asl = JSON.parse(cliDefinition);
}, 300_000); // the CDK app and a stack start on a busy machine

afterAll(async () => {
  await stack?.stop();
  if (outDir) await rm(outDir, { recursive: true, force: true });
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

describe("the state machine the local stack runs", () => {
  it("is byte for byte the definition `cdk synth` produces", () => {
    expect(cliDefinition.length).toBeGreaterThan(1000);
    expect(runningDefinition).toBe(cliDefinition);
    expect(localDefinition).toBe(cliDefinition);
  });

  it("is the same when the local stack reads it from its cache instead of synthesizing", () => {
    expect([fresh.cached, reread.cached]).toEqual([false, true]);
    expect(fresh.definition).toBe(cliDefinition);
    expect(reread.definition).toBe(cliDefinition);
    expect(runningDefinition).toBe(reread.definition);
    expect([...reread.functions]).toEqual([...fresh.functions]);
  });

  it("is cached under a hash that changes with the settings that change the definition", () => {
    expect(definitionHash({})).toBe(definitionHash({}));
    expect(definitionHash({ maxConcurrency: 3 })).not.toBe(definitionHash({}));
    expect(definitionHash({ interruptTimeoutSeconds: 60 })).not.toBe(definitionHash({}));
  });

  it("runs every Lambda of the template it references, each a published version (no reference left unresolved)", () => {
    const referenced = [...cliDefinition.matchAll(/arn:aws:lambda:[^"]+:function:([A-Za-z0-9]+)(:\d+)?"/g)];
    expect(referenced.length).toBeGreaterThan(0);
    for (const [arn, logicalId, version] of referenced) {
      expect(steps.has(logicalId!), logicalId).toBe(true);
      expect(version, arn).toBe(":1");
    }
  });
});

type State = { Type: string; Next?: string; End?: boolean; Catch?: { ErrorEquals: string[]; Next: string }[]; [key: string]: any };

describe("the state machine's structure", () => {
  const states = () => asl.States as Record<string, State>;
  const catchesTo = (state: State, target: string) =>
    (state.Catch ?? []).some((c) => c.Next === target && c.ErrorEquals.includes("States.ALL"));

  it("has the states users read in the console", () => {
    expect(asl.StartAt).toBe("Start run");
    for (const name of [
      "Start run",
      "Choose mode",
      "Route request",
      "Agent turn",
      "Plan",
      "Execute tasks",
      "Summarize",
      "Finalize",
      "Record failure",
    ]) {
      expect(states()[name], name).toBeDefined();
    }
    expect(states()["Start run"]!.Type).toBe("Task");
    expect(states()["Choose mode"]!.Type).toBe("Choice");
    expect(states()["Start run"]!.Next).toBe("Choose mode");
  });

  it("chooses the mode: react → Agent turn, plan_solve → Plan, route → Route request (which chooses again)", () => {
    const choices = states()["Choose mode"]!.Choices as { Variable: string; StringEquals: string; Next: string }[];
    const byMode = Object.fromEntries(choices.map((c) => [c.StringEquals, c.Next]));
    expect(byMode).toMatchObject({ react: "Agent turn", plan_solve: "Plan", route: "Route request" });
    expect(states()["Route request"]!.Next).toBe("Choose mode");
    expect(states().Summarize!.Next).toBe("Finalize");
  });

  it("executes a step's tasks in a Map with bounded concurrency, each task catching its own failure", () => {
    const map = states()["Execute tasks"]!;
    expect(map.Type).toBe("Map");
    expect(map.MaxConcurrency).toBeGreaterThanOrEqual(1);
    expect(map.MaxConcurrency).toBeLessThanOrEqual(40);
    expect(map.Next).toBe("Plan"); // the planner sees the results
    const inner = map.ItemProcessor.States as Record<string, State>;
    expect(map.ItemProcessor.StartAt).toBe("Execute task");
    expect(inner["Execute task"]!.Type).toBe("Task");
    expect(catchesTo(inner["Execute task"]!, "Record task failure")).toBe(true);
    expect(inner["Record task failure"]!.Type).toBe("Task");
    // a failed task ends its own iteration, not the run
    expect(inner["Record task failure"]!.End).toBe(true);
  });

  it("routes the errors no retry can change to Record failure, and lets any other error fail the execution at its own state", () => {
    const catchers = Object.entries(states())
      .filter(([name, state]) => (state.Type === "Task" || state.Type === "Map") && name !== "Record failure")
      .map(
        ([name, state]) => [name, (state.Catch ?? []).filter((c) => c.Next === "Record failure").flatMap((c) => c.ErrorEquals)] as const,
      );
    // A catch-all would make the execution end in "Run failed", from where a redrive cannot run the failed state again.
    for (const [name, errors] of catchers) expect(errors.sort(), name).toEqual([...FINAL_STEP_ERRORS].sort());
    expect(states()["Record failure"]!.Next).toBe("Run failed");
    expect(states()["Run failed"]!.Type).toBe("Fail");
  });
});
