import { createHash } from "node:crypto";
import type { DetailedError } from "@cedar-policy/cedar-wasm/nodejs";
import type { PolicyMode, ToolPolicy } from "../contracts/policies.js";
import { BadRequestError } from "../errors.js";
import type { ToolSet } from "../ports/tools.js";
import { type Cedar, cedar } from "./cedar.js";
import { policySchema } from "./toolSchema.js";

/**
 * A tenant's policies as Cedar evaluates them. Every tool call is permitted unless a `forbid`
 * statement matches it; a statement annotated `@approval` forbids the call until a person approves
 * it, and `@reason("…")` says why (the model and the approval card read it).
 */

/** One forbid statement of a named policy. */
export interface Statement {
  policy: string;
  version: number;
  mode: PolicyMode;
  approval: boolean;
  reason?: string;
}

export interface CompiledPolicies {
  /** The set as the engine holds it, parsed once (statefulIsAuthorized). */
  setId: string;
  statements: Map<string, Statement>;
}

/** The permit every call starts from: policies only forbid. */
export const ALLOW_ID = "stepwise-allow";
const ALLOW = "permit(principal, action, resource);";

/** Sets kept parsed in the engine: a container sees few distinct sets (a new one per policy save). */
const KEPT_SETS = 64;
const compiled = new Map<string, CompiledPolicies>();
let setsMade = 0;

/**
 * The statements of the tenant's policies in force, each under its own id (`name@version#n`),
 * parsed once per container for each distinct set (versions never change once saved).
 */
export async function compilePolicies(policies: ToolPolicy[]): Promise<CompiledPolicies> {
  const key = createHash("sha256")
    .update(JSON.stringify(policies.map((p) => [p.name, p.version, p.mode, p.cedar])))
    .digest("hex");
  const known = compiled.get(key);
  if (known) return known;
  const engine = await cedar();
  const texts: Record<string, string> = { [ALLOW_ID]: ALLOW };
  const statements = new Map<string, Statement>();
  for (const policy of policies) {
    statementsOf(engine, policy.cedar).forEach(({ text, annotations }, n) => {
      const id = `${policy.name}@${policy.version}#${n}`;
      texts[id] = text;
      statements.set(id, {
        policy: policy.name,
        version: policy.version,
        mode: policy.mode,
        approval: "approval" in annotations,
        reason: annotations.reason ?? undefined,
      });
    });
  }
  // Ids go round: past KEPT_SETS the oldest set (first in the map) has the next id, and its slot is
  // taken over (the engine has no way to drop a set).
  const setId = `set-${setsMade++ % KEPT_SETS}`;
  if (compiled.size >= KEPT_SETS) compiled.delete(compiled.keys().next().value as string);
  const parsed = engine.preparsePolicySet(setId, { staticPolicies: texts });
  if (parsed.type === "failure") throw invalid("The policies do not parse", parsed.errors);
  const set = { setId, statements };
  compiled.set(key, set);
  return set;
}

/** A policy's statements with their annotations; throws a 400 for text that does not parse or permits. */
function statementsOf(engine: Cedar, text: string): { text: string; annotations: Record<string, string | null> }[] {
  const parts = engine.policySetTextToParts(text);
  if (parts.type === "failure") throw invalid("The policy does not parse", parts.errors);
  if (parts.policy_templates.length)
    throw new BadRequestError("Policy templates (?principal, ?resource) are not supported; write the entity itself.");
  if (parts.policies.length === 0) throw new BadRequestError("The policy holds no statement.");
  return parts.policies.map((statement) => {
    const json = engine.policyToJson(statement);
    if (json.type === "failure") throw invalid("The policy does not parse", json.errors);
    if (json.json.effect !== "forbid") {
      throw new BadRequestError(
        "Only forbid statements are allowed: every tool call is permitted unless a policy forbids it (annotate a forbid with @approval to ask a person instead).",
      );
    }
    return { text: statement, annotations: (json.json.annotations ?? {}) as Record<string, string | null> };
  });
}

/**
 * What a save checks: the text parses, holds only forbid statements, and every statement is valid
 * against the schema of the tenant's catalogue (an unknown tool, argument or type is an error).
 */
export async function checkPolicy(cedarText: string, tools: ToolSet): Promise<void> {
  const engine = await cedar();
  const statements = statementsOf(engine, cedarText);
  const answer = engine.validate({
    schema: policySchema(tools) as Parameters<Cedar["validate"]>[0]["schema"],
    policies: { staticPolicies: Object.fromEntries(statements.map((s, n) => [`statement${n + 1}`, s.text])) },
    validationSettings: { mode: "strict" },
  });
  if (answer.type === "failure") throw invalid("The policy does not fit the tool catalogue", answer.errors);
  const errors = answer.validationErrors.map((e) => ({ ...e.error, message: `${e.policyId}: ${e.error.message}` }));
  if (errors.length) throw invalid("The policy does not fit the tool catalogue", errors);
}

function invalid(what: string, errors: DetailedError[]): BadRequestError {
  const details = errors.map((e) => ({ path: "cedar", message: e.help ? `${e.message} (${e.help})` : e.message }));
  return new BadRequestError(`${what}: ${details.map((d) => d.message).join("; ")}`, details, "invalid_policy");
}
