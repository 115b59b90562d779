import * as z from "zod";
import { GuardrailChecks } from "./guardrails.js";
import { ApprovalPolicy } from "./interrupts.js";
import { AgentRoleSettings, RequestedMode } from "./run.js";

/** The most characters one set of operator's instructions may have (the tenant's, a saved agent's, a run's). */
export const MAX_INSTRUCTIONS_CHARS = 4_000;

/**
 * An operator's instructions for every agent of a run (house rules, the answer's language, a
 * Plan-Solve SOP): plain text, added to each role's prompt after its stable part.
 */
export const Instructions = z
  .string()
  .trim()
  .max(MAX_INSTRUCTIONS_CHARS, `instructions may have at most ${MAX_INSTRUCTIONS_CHARS} characters`)
  // Line breaks and tabs are text; other control characters only hide what a prompt says.
  .regex(/^(?:[^\p{Cc}]|[\n\t])*$/u, "instructions may hold no control characters but line breaks and tabs");

/** Modes are the built-in skills (A2A): a saved agent takes another name. */
const RESERVED_AGENT_NAMES = new Set<string>(RequestedMode.options);

/** A saved agent's name: what a run names (`analyst`), lowercase so it reads the same everywhere. */
export const AgentName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,47}$/, "an agent name is a lowercase letter then up to 47 of a-z, 0-9, _ and -")
  .refine((name) => !RESERVED_AGENT_NAMES.has(name), "auto, react and plan_solve are modes, not agent names");

/** What a run names: a saved agent's latest version (`analyst`) or one version of it (`analyst@3`). */
export const AgentRef = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,47}(@[1-9][0-9]{0,8})?$/, "an agent is named as name or name@version (e.g. analyst, analyst@3)");

export function parseAgentRef(ref: string): { name: string; version?: number } {
  const [name = "", version] = ref.split("@");
  return version ? { name, version: Number(version) } : { name };
}

/** `PUT /v1/agents/{name}`: one saved agent's configuration; each save is a new version. */
export const SaveAgentRequest = z.strictObject({
  description: z.string().trim().max(500).optional(),
  /** The mode its runs take when the run asks for none (auto). */
  mode: RequestedMode.optional(),
  instructions: Instructions.optional(),
  /** Model settings per role (router, planner, executor, react, summarizer), among the models the deployment allows. */
  roles: AgentRoleSettings.optional(),
  /** The only tools its agents are offered, from the tenant's catalogue (`GET /v1/tools`); none given: the whole catalogue. */
  tools: z
    .array(z.string().min(1).max(128))
    .max(128)
    .refine((names) => new Set(names).size === names.length, "each tool is named once")
    .optional(),
  /** Its runs' approval policy when the run sets none. */
  approval: ApprovalPolicy.optional(),
  /** Checks its runs add to the tenant's (guardrails). */
  guardrails: GuardrailChecks.optional(),
});
export type SaveAgentRequest = z.infer<typeof SaveAgentRequest>;

/** One immutable version of a saved agent. */
export const SavedAgent = SaveAgentRequest.extend({
  schemaVersion: z.literal(1),
  name: z.string(),
  version: z.number().int().min(1),
  createdAt: z.string(),
});
export type SavedAgent = z.infer<typeof SavedAgent>;
