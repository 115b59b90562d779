import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { PolicyMode, ToolPolicy } from "../../../../shared/contracts/policies.js";
import { type CallFacts, decideCall, type Principal } from "../../../../shared/policy/decide.js";
import { checkPolicy, compilePolicies } from "../../../../shared/policy/policySet.js";
import type { Tool } from "../../../../shared/ports/tools.js";
import { builtinTools } from "../../../../shared/tools/builtins.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { defineTool } from "../../../../shared/tools/tool.js";

/** Cedar policies on tool calls: what a save accepts, and what each call is decided. */

const pay = defineTool({
  name: "pay",
  description: "Pay an amount.",
  access: "write",
  parameters: z.object({ amount: z.number().int(), fee: z.number().optional(), to: z.string(), tags: z.array(z.string()).optional() }),
  async run() {
    return "paid";
  },
});
const tools = new ToolRegistry([...builtinTools, pay]);
const tool = (name: string) => tools.get(name) as Tool;

const SIZE = `@reason("Artifacts may have at most 1,000 characters.")
forbid(principal, action == Action::"write_artifact", resource) when { context.sizes.content > 1000 };`;
const PAYMENTS = `@approval
@reason("Payments over 500 need a person's approval.")
forbid(principal, action == Action::"pay", resource) when { context.arguments.amount > 500 };`;

const policy = (name: string, cedar: string, mode: PolicyMode = "enforce", version = 1): ToolPolicy => ({
  schemaVersion: 1,
  name,
  version,
  mode,
  cedar,
  createdAt: "2026-11-28T00:00:00.000Z",
});
const principal = { tenantId: "t1", sessionId: "s1" };
const facts = (name: string, args: unknown, extra: Partial<CallFacts> = {}): CallFacts => ({
  tool: tool(name),
  arguments: args,
  spend: { promptTokens: 0, completionTokens: 0, llmCalls: 0, toolCalls: 0 },
  turn: 1,
  ...extra,
});
const decide = async (policies: ToolPolicy[], call: CallFacts, who: Principal = principal) =>
  decideCall(await compilePolicies(policies), who, call, tools);

describe("decideCall", () => {
  it("denies write_artifact over 1,000 characters with the policy's reason, and allows it at 1,000", async () => {
    const denied = await decide([policy("artifact-size", SIZE)], facts("write_artifact", { filename: "a.md", content: "x".repeat(1001) }));
    expect(denied).toEqual({
      verdict: "deny",
      reason: "Artifacts may have at most 1,000 characters.",
      findings: [
        { policy: "artifact-size", version: 1, mode: "enforce", verdict: "deny", reason: "Artifacts may have at most 1,000 characters." },
      ],
    });
    const allowed = await decide([policy("artifact-size", SIZE)], facts("write_artifact", { filename: "a.md", content: "x".repeat(1000) }));
    expect(allowed).toEqual({ verdict: "allow", findings: [] });
  });

  it("in log_only a matching policy allows the call and says what it would have decided", async () => {
    const decided = await decide(
      [policy("artifact-size", SIZE, "log_only")],
      facts("write_artifact", { filename: "a.md", content: "x".repeat(2000) }),
    );
    expect(decided.verdict).toBe("allow");
    expect(decided.findings).toEqual([expect.objectContaining({ policy: "artifact-size", mode: "log_only", verdict: "deny" })]);
  });

  it("@approval asks a person over the amount; a deny from another policy outweighs it", async () => {
    expect(await decide([policy("payments", PAYMENTS)], facts("pay", { amount: 800, to: "acme" }))).toMatchObject({
      verdict: "require_approval",
      reason: "Payments over 500 need a person's approval.",
    });
    expect((await decide([policy("payments", PAYMENTS)], facts("pay", { amount: 400, to: "acme" }))).verdict).toBe("allow");
    const noAcme = 'forbid(principal, action == Action::"pay", resource) when { context.arguments.to == "acme" };';
    const both = await decide([policy("payments", PAYMENTS), policy("no-acme", noAcme)], facts("pay", { amount: 800, to: "acme" }));
    expect(both).toMatchObject({ verdict: "deny", reason: "Policy no-acme forbids pay here." });
    expect(both.findings.map((f) => [f.policy, f.verdict])).toEqual([
      ["no-acme", "deny"],
      ["payments", "require_approval"],
    ]);
  });

  it("reads the principal (saved agent, tenant), the tool's access, fractional numbers, the run's spend and the session's turn", async () => {
    const onlyAnalyst = 'forbid(principal, action == Action::"text_stats", resource) unless { principal in Agent::"analyst" };';
    const code = facts("text_stats", { text: "a b" });
    expect((await decide([policy("code", onlyAnalyst)], code, { ...principal, agent: "analyst" })).verdict).toBe("allow");
    expect((await decide([policy("code", onlyAnalyst)], code, { ...principal, agent: "writer" })).verdict).toBe("deny");
    expect((await decide([policy("code", onlyAnalyst)], code)).verdict).toBe("deny");
    const tenant = 'forbid(principal in Tenant::"t2", action, resource) when { resource.access == "write" };';
    expect((await decide([policy("t2", tenant)], facts("pay", { amount: 1, to: "x" }), { tenantId: "t2", sessionId: "s" })).verdict).toBe(
      "deny",
    );
    expect((await decide([policy("t2", tenant)], facts("pay", { amount: 1, to: "x" }))).verdict).toBe("allow");
    const fee =
      'forbid(principal, action == Action::"pay", resource) when { context.arguments has fee && context.arguments.fee.greaterThan(decimal("2.5")) };';
    expect((await decide([policy("fee", fee)], facts("pay", { amount: 1, to: "x", fee: 2.75 }))).verdict).toBe("deny");
    expect((await decide([policy("fee", fee)], facts("pay", { amount: 1, to: "x", fee: 2.5 }))).verdict).toBe("allow");
    const spend = "forbid(principal, action, resource) when { context.spend.tokens > 10000 || context.session.turn > 20 };";
    const spent = { promptTokens: 9000, completionTokens: 2000, llmCalls: 3, toolCalls: 2 };
    expect((await decide([policy("spend", spend)], facts("calculator", { expression: "1+1" }, { spend: spent }))).verdict).toBe("deny");
    expect((await decide([policy("spend", spend)], facts("calculator", { expression: "1+1" }, { turn: 21 }))).verdict).toBe("deny");
    expect((await decide([policy("spend", spend)], facts("calculator", { expression: "1+1" }))).verdict).toBe("allow");
  });

  it("a statement that cannot be evaluated on a call fails closed (denies)", async () => {
    const tags = 'forbid(principal, action == Action::"pay", resource) when { context.arguments.tags.contains("x") };';
    const decided = await decide([policy("tags", tags)], facts("pay", { amount: 1, to: "x" }));
    expect(decided.verdict).toBe("deny");
    expect(decided.reason).toMatch(/^Policy tags could not be evaluated on this call/);
  });
});

describe("checkPolicy (a save)", () => {
  it("accepts forbid statements that fit the catalogue", async () => {
    await expect(checkPolicy(`${SIZE}\n${PAYMENTS}`, tools)).resolves.toBeUndefined();
  });

  it.each([
    ["text that does not parse", "forbid(principal, action resource);", /does not parse/],
    ["an unknown tool", 'forbid(principal, action == Action::"wire_money", resource);', /does not fit the tool catalogue: .*wire_money/],
    [
      "an argument the tool does not take",
      'forbid(principal, action == Action::"pay", resource) when { context.arguments.iban == "x" };',
      /does not fit/,
    ],
    ["a type that does not fit", 'forbid(principal, action == Action::"pay", resource) when { context.arguments.to > 5 };', /does not fit/],
    ["a permit", "permit(principal, action, resource);", /Only forbid statements/],
    ["a template", "forbid(principal == ?principal, action, resource);", /templates/],
  ])("refuses %s with a 400 and the reason", async (_name, cedar, message) => {
    const error = await checkPolicy(cedar, tools).catch((e: unknown) => e);
    expect(error).toMatchObject({ statusCode: 400, code: expect.stringMatching(/invalid_policy|invalid_request/) });
    expect((error as Error).message).toMatch(message);
  });
});
