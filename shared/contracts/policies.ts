import * as z from "zod";

/** The most characters one policy's Cedar text may have. */
export const MAX_POLICY_CHARS = 20_000;

/** `log_only`: the call runs and a `guardrail.decided` event says what would have happened; `enforce`: the decision holds. */
export const PolicyMode = z.enum(["log_only", "enforce"]);
export type PolicyMode = z.infer<typeof PolicyMode>;

/** A policy's name: what the API and events call it (`artifact-size`). */
export const PolicyName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,63}$/, "a policy name is a lowercase letter then up to 63 of a-z, 0-9, _ and -");

/** `PUT /v1/policies/{name}`: one policy's Cedar text and mode; each save is a new version. */
export const SavePolicyRequest = z.strictObject({
  description: z.string().trim().max(500).optional(),
  mode: PolicyMode.default("enforce"),
  /** Cedar `forbid` statements over the tenant's tools (docs/policies.md). */
  cedar: z.string().trim().min(1, "cedar holds at least one forbid statement").max(MAX_POLICY_CHARS),
});
export type SavePolicyRequest = z.infer<typeof SavePolicyRequest>;

/** One immutable version of a tenant's tool policy. */
export const ToolPolicy = z.object({
  schemaVersion: z.literal(1),
  name: z.string(),
  version: z.number().int(),
  description: z.string().optional(),
  mode: PolicyMode,
  cedar: z.string(),
  createdAt: z.string(),
});
export type ToolPolicy = z.infer<typeof ToolPolicy>;
