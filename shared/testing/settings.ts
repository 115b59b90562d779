import { defaultSettings, type Settings } from "../settings.js";

/** Settings to change, group by group: `{ budgets: { toolConcurrency: 4 } }` keeps the other budgets. */
export type SettingsOverrides = { [K in keyof Settings]?: Settings[K] extends object ? Partial<Settings[K]> : Settings[K] };

/** The defaults (with a state machine, as deployed) and `overrides` over them, group by group. */
export function testSettings(overrides: SettingsOverrides = {}): Settings {
  const settings: Settings = {
    ...defaultSettings("memory"),
    stateMachineArn: "arn:aws:states:us-east-1:000000000000:stateMachine:Stepwise",
  };
  // Off unless a test turns it on: the title's model call after each first turn would shift every scripted model's replies.
  settings.model = { ...settings.model, sessionTitles: false };
  const groups = settings as unknown as Record<string, unknown>;
  for (const [name, value] of Object.entries(overrides)) {
    const group = groups[name];
    groups[name] = typeof group === "object" && typeof value === "object" ? { ...group, ...value } : value;
  }
  return settings;
}
