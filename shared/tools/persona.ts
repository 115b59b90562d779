import * as z from "zod";
import type { Tool } from "../ports/tools.js";

/**
 * Personas (JD Genie's "digital employee"): for each call the model may name the job title of who
 * makes it, in an optional `persona` argument every tool gets. The argument is shown on the
 * tool.called event and removed before the tool runs; without one, a title derived from the tool.
 */
export const PERSONA_ARGUMENT = "persona";
const MAX_WORDS = 6;

const PERSONA_SCHEMA = {
  type: "string",
  maxLength: 60,
  description: `Optional: the job title (at most ${MAX_WORDS} words) of the specialist making this call, e.g. "Financial analyst".`,
} as const;

const Persona = z.string().trim().min(1).max(60);

/** The persona the model gave for a call (clean, at most 6 words), else the tool's own. */
export function personaOf(args: unknown, tool: Tool | undefined, toolName: string): string {
  const given = Persona.safeParse(isRecord(args) ? args[PERSONA_ARGUMENT] : undefined);
  if (given.success) return given.data.replace(/\s+/g, " ").split(" ").slice(0, MAX_WORDS).join(" ");
  return tool?.persona ?? defaultPersona(toolName);
}

/** `text_stats` → "Text stats specialist"; a source's tool is named by the tool's own part. */
export function defaultPersona(toolName: string): string {
  const own = toolName.includes("__") ? toolName.slice(toolName.lastIndexOf("__") + 2) : toolName;
  const words = own
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .slice(0, MAX_WORDS - 1);
  const phrase = words.join(" ").toLowerCase() || "tool";
  return `${phrase[0].toUpperCase()}${phrase.slice(1)} specialist`;
}

/** The arguments without the persona, for the tool itself. */
export function withoutPersona(args: unknown): unknown {
  if (!isRecord(args) || !(PERSONA_ARGUMENT in args)) return args;
  const { [PERSONA_ARGUMENT]: _persona, ...rest } = args;
  return rest;
}

/** A tool's JSON schema with the optional persona property added (unless the tool has its own). */
export function withPersonaProperty(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  if (PERSONA_ARGUMENT in properties) return schema;
  return { ...schema, type: schema.type ?? "object", properties: { ...properties, [PERSONA_ARGUMENT]: PERSONA_SCHEMA } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
