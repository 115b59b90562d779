import type { StatefulAuthorizationCall } from "@cedar-policy/cedar-wasm/nodejs";
import type { PolicyMode } from "../contracts/policies.js";
import type { Tool, ToolSet } from "../ports/tools.js";
import { cedar } from "./cedar.js";
import { ALLOW_ID, type CompiledPolicies } from "./policySet.js";
import { type CedarType, cedarValueOf, contextTypeOf, sizeValuesOf } from "./toolSchema.js";

/** Who calls: the run's tenant, its saved agent (if it named one) and its session. */
export interface Principal {
  tenantId: string;
  agent?: string;
  sessionId: string;
}

/** What the call is made with: its arguments, the run's spend so far, the session's turn. */
export interface CallFacts {
  tool: Tool;
  arguments: unknown;
  spend: { promptTokens: number; completionTokens: number; llmCalls: number; toolCalls: number };
  turn: number;
}

export type Verdict = "allow" | "deny" | "require_approval";

/** One policy's word on a call: what it decides (or, in log_only, would have decided) and why. */
export interface PolicyFinding {
  policy: string;
  version: number;
  mode: PolicyMode;
  verdict: Exclude<Verdict, "allow">;
  reason: string;
}

/** The decision on one call: what holds (enforced policies only) and every policy's finding. */
export interface CallDecision {
  verdict: Verdict;
  /** Why, when not allowed: the deciding policies' reasons. */
  reason?: string;
  findings: PolicyFinding[];
}

/**
 * Evaluates the tenant's policies on one tool call, in one Cedar request. A matching forbid denies
 * (or, annotated `@approval`, asks a person); a deny outweighs an approval. A statement that fails
 * to evaluate (an argument missing, a type that does not fit) counts as matching: a policy that
 * cannot be read fails closed.
 */
export async function decideCall(policies: CompiledPolicies, principal: Principal, call: CallFacts, tools: ToolSet): Promise<CallDecision> {
  const engine = await cedar();
  const answer = engine.statefulIsAuthorized(requestOf(policies, principal, call, tools));
  if (answer.type === "failure") {
    const reason = `The tool policies could not be evaluated: ${answer.errors.map((e) => e.message).join("; ")}`;
    return { verdict: "deny", reason, findings: [] };
  }
  const { reason: matched, errors } = answer.response.diagnostics;
  const findings = new Map<string, PolicyFinding>();
  const find = (id: string, why?: string) => {
    const statement = policies.statements.get(id);
    if (!statement || id === ALLOW_ID) return;
    const verdict = why === undefined && statement.approval ? "require_approval" : "deny";
    const reason = why ?? statement.reason ?? `Policy ${statement.policy} forbids ${call.tool.name} here.`;
    const known = findings.get(statement.policy);
    // One finding per policy: its strongest statement.
    if (!known || (known.verdict === "require_approval" && verdict === "deny")) {
      findings.set(statement.policy, { policy: statement.policy, version: statement.version, mode: statement.mode, verdict, reason });
    }
  };
  for (const id of matched) find(id);
  for (const { policyId, error } of errors)
    find(policyId, `Policy ${policies.statements.get(policyId)?.policy} could not be evaluated on this call: ${error.message}`);
  const all = [...findings.values()].sort((a, b) => (a.policy < b.policy ? -1 : 1));
  const enforced = all.filter((f) => f.mode === "enforce");
  const verdict = enforced.some((f) => f.verdict === "deny") ? "deny" : enforced.length ? "require_approval" : "allow";
  const reason =
    verdict === "allow"
      ? undefined
      : enforced
          .filter((f) => f.verdict === verdict)
          .map((f) => f.reason)
          .join(" ");
  return { verdict, ...(reason ? { reason } : {}), findings: all };
}

/** Each tool's arguments type, made once per schema (the registry keeps its schemas). */
const argumentTypes = new WeakMap<object, CedarType>();
function argumentsTypeOf(schema: Record<string, unknown>): CedarType {
  let type = argumentTypes.get(schema);
  if (!type) {
    type = contextTypeOf(schema).attributes.arguments as CedarType;
    argumentTypes.set(schema, type);
  }
  return type;
}

function requestOf(policies: CompiledPolicies, principal: Principal, call: CallFacts, tools: ToolSet): StatefulAuthorizationCall {
  const tenant = { type: "Tenant", id: principal.tenantId };
  const agent = principal.agent ? { type: "Agent", id: principal.agent } : undefined;
  const session = { type: "Session", id: principal.sessionId };
  const resource = { type: "Tool", id: call.tool.name };
  const { spend } = call;
  const context = {
    arguments: (cedarValueOf(argumentsTypeOf(tools.schemaOf(call.tool)), call.arguments) ?? {}) as Record<string, never>,
    sizes: sizeValuesOf(call.arguments),
    spend: { ...spend, tokens: spend.promptTokens + spend.completionTokens },
    session: { turn: call.turn },
  };
  return {
    principal: session,
    action: { type: "Action", id: call.tool.name },
    resource,
    context,
    preparsedPolicySetId: policies.setId,
    entities: [
      { uid: tenant, attrs: {}, parents: [] },
      ...(agent ? [{ uid: agent, attrs: {}, parents: [tenant] }] : []),
      { uid: session, attrs: {}, parents: [agent ?? tenant] },
      { uid: resource, attrs: { access: call.tool.access, source: call.tool.source ?? "builtin" }, parents: [] },
    ],
  };
}
