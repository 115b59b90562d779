import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { StepName } from "../aws/handlers.js";

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), "../..");

/** The deploy-time settings that change the state machine, as plain values (no CDK types). */
export interface StateMachineSettings {
  interruptTimeoutSeconds?: number;
  maxConcurrency?: number;
}

export interface CachedDefinition {
  definition: string;
  functions: Map<string, StepName>;
  /** Whether it came from the cache (false: synthesized now, with aws-cdk-lib). */
  cached: boolean;
}

/** The entry's shape; its version changes when what an entry promises changes (now: validated as Step Functions would). */
const ENTRY_VERSION = 2;

/**
 * The files the synthesized state machine depends on: the CDK app (infra/aws), the synthesis
 * itself and the lockfile (the aws-cdk-lib version).
 */
function sourceFiles(): string[] {
  const files: string[] = [path.join(root, "package-lock.json"), path.join(root, "infra/local/synth.ts")];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts")) files.push(full);
    }
  };
  walk(path.join(root, "infra/aws"));
  return files;
}

/** Changes whenever a source of the definition or a setting changes. */
export function definitionHash(settings: StateMachineSettings): string {
  const hash = createHash("sha256").update(JSON.stringify({ settings, version: ENTRY_VERSION }));
  for (const file of sourceFiles()) hash.update(path.relative(root, file)).update("\0").update(readFileSync(file)).update("\0");
  return hash.digest("hex");
}

/**
 * The state machine definition the local stack runs: synthesized with aws-cdk-lib (the same code
 * as `cdk synth`, several seconds and a lot of memory), or read back from the cache when nothing
 * it depends on has changed since. The ASL parity test compares both with `cdk synth`'s.
 * A definition is validated (ASL schema, paths, ARNs: what CreateStateMachine checks) before it is
 * cached, so a cached one is not validated again at every start (compiling the ASL schemas costs
 * more CPU than anything else the stack does before it listens).
 */
export async function localDefinition(
  settings: StateMachineSettings,
  cacheDir = path.join(root, "node_modules", ".cache", "stepwise"),
): Promise<CachedDefinition> {
  const hash = definitionHash(settings);
  const file = path.join(cacheDir, `state-machine-${hash.slice(0, 32)}.json`);
  try {
    const saved = JSON.parse(readFileSync(file, "utf8")) as { hash: string; definition: string; functions: [string, StepName][] };
    if (saved.hash === hash) return { definition: saved.definition, functions: new Map(saved.functions), cached: true };
  } catch {
    // not cached yet
  }
  const { synthesizeFresh } = await import("./synth.js");
  const { definition, functions } = await synthesizeFresh(settings);
  await validateDefinition(definition);
  try {
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify({ hash, definition, functions: [...functions] }));
    renameSync(`${file}.${process.pid}.tmp`, file);
  } catch {
    // a read-only checkout: synthesize at every start
  }
  return { definition, functions, cached: false };
}

/** Throws, naming the problems, unless the definition passes Step Functions' validation (as aws-local-stepfunctions runs it). */
export async function validateDefinition(definition: string): Promise<void> {
  const { StateMachine } = await import("aws-local-stepfunctions");
  new StateMachine(JSON.parse(definition), { validationOptions: { checkArn: true, checkPaths: true } });
}
