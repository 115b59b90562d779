import * as z from "zod";

/**
 * Guardrails: checks on what goes into a run and what comes out of it, configured per tenant
 * (`PUT /v1/settings`) and per saved agent (`PUT /v1/agents/{name}`). A run keeps the checks it
 * was submitted with (the tenant's, then its saved agent's).
 */

/** What a check does when it fires: stop the run (or the text), replace the span, or only say so. */
export const GuardrailAction = z.enum(["block", "redact", "warn"]);
export type GuardrailAction = z.infer<typeof GuardrailAction>;

/**
 * What a check reads: the run's input, the text people see (answers, summaries, reports, streamed
 * deltas), and the results of tools that bring outside text in (web, files, MCP).
 */
export const GuardrailStage = z.enum(["input", "output", "tool_results"]);
export type GuardrailStage = z.infer<typeof GuardrailStage>;

export const PiiEntity = z.enum(["email", "phone", "card", "iban", "ip"]);
export type PiiEntity = z.infer<typeof PiiEntity>;

const common = {
  /** Names the check in events ("pii", "no-secrets"); default: its kind. */
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, "a check name is 1 to 64 letters, digits, '_', '.' or '-'")
    .optional(),
  action: GuardrailAction,
  /** Where it runs; default: input and output. */
  on: z.array(GuardrailStage).min(1).max(3).optional(),
};

/**
 * A service-backed check (moderation, judge) that cannot answer: `block` checks fail closed (retried,
 * then the run fails with the reason), `warn` checks fail open (the text goes on, an event says so).
 */
const onFailure = { onFailure: z.enum(["closed", "open"]).optional() };

function validPattern(pattern: string, flags: string | undefined): string | undefined {
  try {
    new RegExp(pattern, flags);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export const GuardrailCheck = z.discriminatedUnion("kind", [
  /** An OpenAI-compatible `/v1/moderations` endpoint (the model's): flagged text fires. */
  z.strictObject({
    kind: z.literal("moderation"),
    ...common,
    ...onFailure,
    /** Only these categories fire (e.g. ["violence", "hate"]); default: any flagged category. */
    categories: z.array(z.string().min(1).max(64)).max(32).optional(),
    /** The moderation model to ask; default `omni-moderation-latest`. */
    model: z.string().min(1).max(128).optional(),
  }),
  /** Personal data: e-mail addresses, phone numbers, card numbers (Luhn-checked), IBANs, IP addresses. */
  z.strictObject({ kind: z.literal("pii"), ...common, entities: z.array(PiiEntity).min(1).optional() }),
  /** A regular expression (JavaScript syntax); `flags` of `gimsuy` ("g" is implied). */
  z
    .strictObject({
      kind: z.literal("regex"),
      ...common,
      pattern: z.string().min(1).max(1_000),
      flags: z
        .string()
        .regex(/^[imsuy]*$/, "flags are among i, m, s, u and y")
        .optional(),
    })
    .superRefine((check, ctx) => {
      const error = validPattern(check.pattern, check.flags);
      if (error) ctx.addIssue({ code: "custom", path: ["pattern"], message: `not a valid regular expression: ${error}` });
      else if (new RegExp(check.pattern, check.flags).test("")) {
        ctx.addIssue({ code: "custom", path: ["pattern"], message: "the pattern matches empty text, so it would fire everywhere" });
      }
    }),
  /** Prompt injection and jailbreak phrasing ("ignore all previous instructions", "you are now DAN"). */
  z.strictObject({ kind: z.literal("prompt_injection"), ...common }),
  /** A model judges the text against a rubric (through the run's model; its tokens count in the run's usage). */
  z.strictObject({
    kind: z.literal("llm_judge"),
    ...common,
    ...onFailure,
    rubric: z.string().trim().min(1).max(2_000),
  }),
]);
export type GuardrailCheck = z.infer<typeof GuardrailCheck>;

export const GuardrailChecks = z
  .array(GuardrailCheck)
  .max(16)
  .superRefine((checks, ctx) => {
    const names = checks.map((c) => c.name ?? c.kind);
    names.forEach((name, i) => {
      if (names.indexOf(name) !== i)
        ctx.addIssue({ code: "custom", path: [i, "name"], message: `two checks are named ${name}: give each its own name` });
      const check = checks[i];
      if (check.action === "redact" && (check.kind === "moderation" || check.kind === "llm_judge" || check.kind === "prompt_injection")) {
        ctx.addIssue({ code: "custom", path: [i, "action"], message: `a ${check.kind} check finds no span to redact: use block or warn` });
      }
    });
  });
export type GuardrailChecks = z.infer<typeof GuardrailChecks>;

/** The stages a check runs at. */
export const stagesOf = (check: GuardrailCheck): readonly GuardrailStage[] => check.on ?? ["input", "output"];
/** The name a check has in events. */
export const checkName = (check: GuardrailCheck): string => check.name ?? check.kind;
