import type { ToolSet } from "../ports/tools.js";

/**
 * The Cedar schema a tenant's policies are checked against, made from its tool catalogue: one
 * action per tool, whose context holds that tool's arguments (typed from its JSON schema), their
 * sizes, the run's spend and the session's turn. Cedar has no string length and no floats, so a
 * string's or list's size is given beside it (`context.sizes.content`) and a fractional number is
 * a `decimal`.
 */

/** A Cedar type in the JSON schema format (https://docs.cedarpolicy.com/schema/json-schema.html). */
export type CedarType =
  | { type: "String" | "Long" | "Boolean"; required?: boolean }
  | { type: "Extension"; name: "decimal"; required?: boolean }
  | { type: "Set"; element: CedarType; required?: boolean }
  | { type: "Record"; attributes: Record<string, CedarType>; required?: boolean };

/** Cedar's Long is 64-bit; a JSON number is exact up to 2^53. */
const DECIMAL_LIMIT = 922_337_203_685_477;

const LONG = { type: "Long" } as const;

/** What the run has spent so far (its usage, this turn's included). */
const SPEND: CedarType = {
  type: "Record",
  attributes: { tokens: LONG, promptTokens: LONG, completionTokens: LONG, llmCalls: LONG, toolCalls: LONG },
};

/** The session's totals before this call: the run's turn in it (earlier turns: turn - 1). */
const SESSION: CedarType = { type: "Record", attributes: { turn: LONG } };

/** The Cedar type of one JSON-schema value; undefined for what Cedar cannot hold (then the value is left out). */
export function cedarTypeOf(schema: unknown): CedarType | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  const s = schema as { type?: unknown; properties?: unknown; required?: unknown; items?: unknown; enum?: unknown };
  const type = Array.isArray(s.type) ? s.type.filter((t) => t !== "null") : [s.type];
  if (type.length !== 1) return undefined;
  switch (type[0]) {
    case "string":
      return { type: "String" };
    case "integer":
      return { type: "Long" };
    case "number":
      return { type: "Extension", name: "decimal" };
    case "boolean":
      return { type: "Boolean" };
    case "array": {
      const element = cedarTypeOf(s.items);
      return element && { type: "Set", element };
    }
    case "object":
      return recordOf(s.properties, s.required);
    default:
      return undefined;
  }
}

function recordOf(properties: unknown, required: unknown): CedarType | undefined {
  if (typeof properties !== "object" || properties === null) return undefined;
  const needed = new Set(Array.isArray(required) ? required : []);
  const attributes: Record<string, CedarType> = {};
  for (const [name, property] of Object.entries(properties)) {
    const type = cedarTypeOf(property);
    if (type) attributes[name] = { ...type, required: needed.has(name) };
  }
  return { type: "Record", attributes };
}

/** Each string or list argument's size (characters or items), under the argument's name. */
function sizesOf(args: CedarType | undefined): CedarType {
  const attributes: Record<string, CedarType> = {};
  if (args?.type === "Record") {
    for (const [name, type] of Object.entries(args.attributes)) {
      if (type.type === "String" || type.type === "Set") attributes[name] = { type: "Long", required: type.required };
    }
  }
  return { type: "Record", attributes };
}

/** A tool's context type: its arguments, their sizes, the run's spend, the session's turn. */
export function contextTypeOf(inputSchema: Record<string, unknown>): CedarType & { type: "Record" } {
  const args = cedarTypeOf(inputSchema) ?? { type: "Record", attributes: {} };
  return { type: "Record", attributes: { arguments: args, sizes: sizesOf(args), spend: SPEND, session: SESSION } };
}

/** The schema of the tenant's catalogue, for `validate` (Cedar's JSON schema format, empty namespace). */
export function policySchema(tools: ToolSet): Record<string, unknown> {
  const actions = Object.fromEntries(
    tools.tools.map((tool) => [
      tool.name,
      { appliesTo: { principalTypes: ["Session"], resourceTypes: ["Tool"], context: contextTypeOf(tools.schemaOf(tool)) } },
    ]),
  );
  return {
    "": {
      entityTypes: {
        Tenant: {},
        Agent: { memberOfTypes: ["Tenant"] },
        Session: { memberOfTypes: ["Agent", "Tenant"] },
        Tool: {
          shape: {
            type: "Record",
            attributes: { access: { type: "String" }, source: { type: "String" } },
          },
        },
      },
      actions,
    },
  };
}

/** A Cedar value of `type` from a JSON value; undefined when the value does not fit (it is left out). */
export function cedarValueOf(type: CedarType, value: unknown): unknown {
  switch (type.type) {
    case "String":
      return typeof value === "string" ? value : undefined;
    case "Long":
      return Number.isSafeInteger(value) ? value : undefined;
    case "Boolean":
      return typeof value === "boolean" ? value : undefined;
    case "Extension":
      // Cedar's decimal: up to four digits after the point.
      return typeof value === "number" && Math.abs(value) < DECIMAL_LIMIT
        ? { __extn: { fn: "decimal", arg: value.toFixed(4) } }
        : undefined;
    case "Set": {
      if (!Array.isArray(value)) return undefined;
      const items = value.map((item) => cedarValueOf(type.element, item));
      return items.every((item) => item !== undefined) ? items : undefined;
    }
    case "Record": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
      const record: Record<string, unknown> = {};
      for (const [name, attribute] of Object.entries(type.attributes)) {
        const converted = cedarValueOf(attribute, (value as Record<string, unknown>)[name]);
        if (converted !== undefined) record[name] = converted;
      }
      return record;
    }
  }
}

/** Sizes of the string and list arguments present. */
export function sizeValuesOf(args: unknown): Record<string, number> {
  if (typeof args !== "object" || args === null) return {};
  const sizes: Record<string, number> = {};
  for (const [name, value] of Object.entries(args)) {
    if (typeof value === "string") sizes[name] = characters(value);
    else if (Array.isArray(value)) sizes[name] = value.length;
  }
  return sizes;
}

/** Characters as a person counts them (code points: an emoji is one), without splitting the string. */
function characters(text: string): number {
  return text.length - (text.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}
