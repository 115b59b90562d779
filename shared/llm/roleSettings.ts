import * as z from "zod";
import type { GenerationSettings } from "./types.js";

/** Request fields Stepwise writes itself: a provider field setting cannot replace them. */
const OWN_FIELDS = [
  "model",
  "messages",
  "tools",
  "tool_choice",
  "stream",
  "stream_options",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "reasoning_effort",
];

/**
 * A provider's own request fields: `{"thinking": {"type": "disabled"}}`, `{"chat_template_kwargs": {"enable_thinking": false}}`.
 * The values arrive parsed from JSON (a setting or a request body), so any value is JSON; z.json() would
 * also say so, but its recursive schema cannot be embedded in the OpenAPI document.
 */
const RequestFields = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a field name is letters, digits and underscores"), z.unknown())
  .refine((fields) => !Object.keys(fields).some((key) => OWN_FIELDS.includes(key)), {
    message: `must not set a field Stepwise writes itself (${OWN_FIELDS.join(", ")}); use the matching setting`,
  });

/** OpenAI's limit on the tools of one request, the default cap. */
export const DEFAULT_TOOL_CAP = 128;
/** Room for every built-in tool and find_tools; no provider is known to take more than this many. */
const MIN_TOOL_CAP = 16;
const MAX_TOOL_CAP = 1_024;

// Shared bases (each chained call builds new schema instances, a cost of every cold start).
const integer = z.number().int();
const flag = z.boolean();

/** One role's generation settings; `null` leaves a default unsent (o-series models reject a temperature). */
const Settings = z
  .strictObject({
    model: z.string().min(1).optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    /** The model's context window: the prompt's budget is this minus the output limit. */
    contextWindow: integer.min(1_024).max(10_000_000).nullable().optional(),
    maxOutputTokens: integer.positive().max(1_000_000).nullable().optional(),
    reasoningEffort: z.enum(["minimal", "low", "medium", "high"]).nullable().optional(),
    /** Send a tool-call turn's reasoning back with it (unset: as the model's family requires, providerRules.ts). */
    reasoningReplay: flag.nullable().optional(),
    requestFields: RequestFields.nullable().optional(),
    /** Tools one request may carry (OpenAI refuses more than 128); a larger catalogue is reached by find_tools. */
    maxTools: integer.min(MIN_TOOL_CAP).max(MAX_TOOL_CAP).optional(),
    /** The model sees images: uploaded images reach it as `image_url` parts (not a generation setting; never sent). */
    vision: flag.optional(),
  })
  .refine((s) => !s.contextWindow || !s.maxOutputTokens || s.maxOutputTokens < s.contextWindow, {
    message: "maxOutputTokens must be less than contextWindow (the reply must leave room for the prompt)",
    path: ["maxOutputTokens"],
  });

/** One schema for every role's entry (a zod schema is immutable; each `.optional()` would build another). */
const OptionalSettings = Settings.optional();

/** Per-role settings (`default` applies to every role, a role's own over it). */
export const RoleSettings = z.strictObject({
  default: OptionalSettings,
  router: OptionalSettings,
  planner: OptionalSettings,
  executor: OptionalSettings,
  react: OptionalSettings,
  summarizer: OptionalSettings,
  /** The session title's one short call; unset, it uses the router's settings (the cheap call of a run). */
  title: OptionalSettings,
});
export type RoleSettings = z.infer<typeof RoleSettings>;
export type Role = Exclude<keyof RoleSettings, "default">;

/** RoleSettings given as JSON text (an environment variable, a `-c` context value) or as an object. */
export const RoleSettingsInput = z.preprocess((value) => {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value; // reported as "expected object" below
  }
}, RoleSettings);

/**
 * JD Genie's values, where its documents give them: every reply at most 8,192 tokens, and the
 * summary written at temperature 0.01 (it states facts, it does not invent).
 */
const ROLE_DEFAULTS: RoleSettings = {
  default: { maxOutputTokens: 8_192 },
  summarizer: { temperature: 0.01 },
};

/** A role's settings: the defaults, then what was configured for every role, then for this one. */
export function settingsFor(role: Role | undefined, given: RoleSettings = {}): GenerationSettings {
  const configured = role === "title" ? titleSettings(given) : given;
  // The tool cap shapes the request (toolCapFor) and the vision mark what it carries (seesImages): neither is a field of it.
  const {
    maxTools: _cap,
    vision: _vision,
    ...merged
  } = {
    ...ROLE_DEFAULTS.default,
    ...(role ? ROLE_DEFAULTS[role] : {}),
    ...configured.default,
    ...(role ? configured[role] : {}),
  };
  // Provider fields add up: a role's own are sent beside those set for every role (`null` sends none).
  const fields =
    role && configured[role]?.requestFields === null
      ? undefined
      : { ...configured.default?.requestFields, ...(role ? configured[role]?.requestFields : {}) };
  merged.requestFields = fields && Object.keys(fields).length ? fields : undefined;
  return Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== null && v !== undefined)) as GenerationSettings;
}

/** The most tools one request of this role may carry. */
export function toolCapFor(role: Role | undefined, configured: RoleSettings = {}): number {
  return (role ? configured[role]?.maxTools : undefined) ?? configured.default?.maxTools ?? DEFAULT_TOOL_CAP;
}

/** Whether the role's model is marked as seeing images (its own mark over every role's). */
export function seesImages(role: Role, configured: RoleSettings = {}): boolean {
  return configured[role]?.vision ?? configured.default?.vision ?? false;
}

/** Whether any role's model sees images (then the run's images must fit the image limits). */
export const anySeesImages = (configured: RoleSettings = {}) => Object.values(configured).some((settings) => settings?.vision === true);

/** The title role's settings: the router's (the cheap call), with the title's own over them. */
function titleSettings(configured: RoleSettings): RoleSettings {
  const { router, title } = configured;
  return router || title ? { ...configured, title: { ...router, ...title } } : configured;
}
