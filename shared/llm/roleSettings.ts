import { z } from "zod";
import type { GenerationSettings } from "./types.js";

/** One role's generation settings; `null` leaves a default unsent (o-series models reject a temperature). */
const Settings = z.strictObject({
  model: z.string().min(1).optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  maxOutputTokens: z.number().int().positive().nullable().optional(),
  reasoningEffort: z.enum(["minimal", "low", "medium", "high"]).nullable().optional(),
  /** The model sees images: uploaded images reach it as `image_url` parts (not a generation setting; never sent). */
  vision: z.boolean().optional(),
});

/** Per-role settings (`default` applies to every role, a role's own over it). */
export const RoleSettings = z.strictObject({
  default: Settings.optional(),
  router: Settings.optional(),
  planner: Settings.optional(),
  executor: Settings.optional(),
  react: Settings.optional(),
  summarizer: Settings.optional(),
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
export function settingsFor(role: Role | undefined, configured: RoleSettings = {}): GenerationSettings {
  const merged = {
    ...ROLE_DEFAULTS.default,
    ...(role ? ROLE_DEFAULTS[role] : {}),
    ...configured.default,
    ...(role ? configured[role] : {}),
  };
  return Object.fromEntries(
    Object.entries(merged).filter(([name, v]) => v !== null && v !== undefined && name !== "vision"),
  ) as GenerationSettings;
}

/** Whether the role's model is marked as seeing images (its own mark over every role's). */
export function seesImages(role: Role, configured: RoleSettings = {}): boolean {
  return configured[role]?.vision ?? configured.default?.vision ?? false;
}

/** Whether any role's model sees images (then the run's images must fit the image limits). */
export const anySeesImages = (configured: RoleSettings = {}) => Object.values(configured).some((settings) => settings?.vision === true);
