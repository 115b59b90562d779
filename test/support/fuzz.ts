import fc from "fast-check";
import { z } from "zod";
import type { Route } from "../../functions/api/routes.js";

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
};

/** Strings that have broken parsers, keys and logs before. */
export const HOSTILE_STRINGS = [
  "",
  " ",
  "x".repeat(1_100),
  "y".repeat(5_000),
  "..",
  "../../etc/passwd",
  "%00",
  "\u0000",
  "%2F",
  "a/b",
  "'; DROP TABLE runs; --",
  "<script>alert(1)</script>",
  "😀".repeat(300),
  "\ud800",
  "RUN#x",
  "__proto__",
  "constructor",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text of a Log4Shell probe, not a template
  "${jndi:ldap://x}",
  "%",
  "%zz",
  "null",
  "-1",
  "1e400",
];

/** Any JSON value, often deep or large. */
const anyJson = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom<unknown>(...HOSTILE_STRINGS, null, -1, 1e308, [], {}));

/**
 * Values for a JSON Schema (from `z.toJSONSchema` of a route's zod contract): mostly close to valid
 * (each field of the right type, some left out, some out of range), sometimes with an unknown
 * field or a value of the wrong type, so both sides of every check are reached.
 */
export function arbitraryFor(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const wrong = anyJson;
  if (schema.enum) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...schema.enum) }, { weight: 1, arbitrary: wrong });
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return fc.oneof(...variants.map((v) => arbitraryFor(v, depth)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string": {
      const max = Math.min(schema.maxLength ?? 200, 200);
      return fc.oneof(
        { weight: 4, arbitrary: fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.max(max, schema.minLength ?? 0) }) },
        { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
        { weight: 1, arbitrary: wrong },
      );
    }
    case "integer":
    case "number":
      return fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: (schema.minimum ?? -10) - 2, max: (schema.maximum ?? 100) + 2 }) },
        { weight: 1, arbitrary: fc.constantFrom<unknown>(0.5, -1, 1e308, "7", null) },
      );
    case "boolean":
      return fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: wrong });
    case "array":
      return fc.oneof(
        { weight: 4, arbitrary: fc.array(schema.items && depth < 4 ? arbitraryFor(schema.items, depth + 1) : anyJson, { maxLength: 5 }) },
        { weight: 1, arbitrary: wrong },
      );
    case "object": {
      if (depth >= 4) return fc.constant({});
      const properties = Object.entries(schema.properties ?? {});
      const required = new Set(schema.required ?? []);
      const known = fc.record(Object.fromEntries(properties.map(([name, s]) => [name, arbitraryFor(s, depth + 1)])), {
        requiredKeys: properties.filter(([name]) => required.has(name)).map(([name]) => name),
      });
      return fc.oneof(
        { weight: 6, arbitrary: known },
        {
          weight: 1,
          arbitrary: fc
            .tuple(known, fc.string({ minLength: 1, maxLength: 20 }), anyJson)
            .map(([o, k, v]) => ({ ...(o as object), [k]: v })),
        },
        { weight: 1, arbitrary: wrong },
      );
    }
    default:
      return anyJson;
  }
}

/** A route's body contract as JSON Schema, if it has one. */
export function bodySchema(route: Route): JsonSchema | undefined {
  return route.body ? (z.toJSONSchema(route.body, { io: "input", unrepresentable: "any" }) as JsonSchema) : undefined;
}

export const paramNames = (route: Route): string[] => [...route.pattern.source.matchAll(/\(\?<(\w+)>/g)].map((m) => m[1]!);

/** A concrete path for the route, each named group replaced by the given (already encoded) value. */
export function pathFor(route: Route, values: Record<string, string>): string {
  return (
    route.pattern.source
      .replace(/^\^/, "")
      .replace(/\$$/, "")
      .replace(/\(\?<(\w+)>[^)]*\)/g, (_, name: string) => values[name] ?? "x")
      // A group of alternatives (`favicon\.(svg|ico)`): the first one.
      .replace(/\(([^?)|][^)|]*)(\|[^)]*)?\)/g, "$1")
      .replace(/\\\//g, "/")
      .replace(/\\(.)/g, "$1")
  );
}
