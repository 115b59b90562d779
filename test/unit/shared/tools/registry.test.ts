import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ToolContext } from "../../../../shared/ports/tools.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { builtinTools } from "../../../../shared/tools/builtins.js";
import { calculator } from "../../../../shared/tools/calculator.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { defineTool } from "../../../../shared/tools/tool.js";

const context: ToolContext = testToolContext();
const call = (name: string, args: string, id = "call_1") => ({ id, name, arguments: args });

const boom = defineTool({
  name: "boom",
  description: "Always fails.",
  access: "read",
  parameters: z.object({}),
  async run() {
    throw new Error("the disk is on fire");
  },
});

let lastArgs: unknown;
const echo = defineTool({
  name: "echo",
  description: "Echoes its arguments.",
  access: "write",
  parameters: z.object({
    text: z.string().min(1).describe("what to echo"),
    times: z.number().int().min(1).max(3).default(1),
    tags: z.array(z.string()).optional(),
  }),
  async run(args) {
    lastArgs = args;
    return args.text.repeat(args.times);
  },
});

const registry = new ToolRegistry([calculator, boom, echo]);

describe("ToolRegistry.execute", () => {
  it("runs a tool with valid arguments", async () => {
    expect(await registry.execute(call("calculator", '{"expression":"17*23"}'), context)).toEqual({ ok: true, output: "17*23 = 391" });
  });

  it("passes the validated arguments, defaults applied", async () => {
    expect(await registry.execute(call("echo", '{"text":"ab"}'), context)).toEqual({ ok: true, output: "ab" });
    expect(lastArgs).toEqual({ text: "ab", times: 1 });
  });

  it.each([['{"expression": "1+1"'], ["{expression: '1+1'}"], ["not json"], ['{"expression":"1"} trailing']])(
    "invalid JSON arguments become an error for the model: %s",
    async (args) => {
      const outcome = await registry.execute(call("calculator", args), context);
      expect(outcome.ok).toBe(false);
      expect(outcome.output).toMatch(/^Error: the arguments of calculator are not valid JSON/);
      expect(outcome.output).toContain(args.slice(0, 20)); // the model sees what it sent
    },
  );

  it("schema violations name the field and the problem", async () => {
    const wrongType = await registry.execute(call("calculator", '{"expression": 42}'), context);
    expect(wrongType.ok).toBe(false);
    expect(wrongType.output).toMatch(/^Error: invalid arguments for calculator: expression: /);

    const missing = await registry.execute(call("calculator", "{}"), context);
    expect(missing).toEqual({ ok: false, output: expect.stringMatching(/^Error: invalid arguments for calculator: expression/) });

    const several = await registry.execute(call("echo", '{"text":"","times":9,"tags":[1]}'), context);
    expect(several.ok).toBe(false);
    expect(several.output).toMatch(/^Error: invalid arguments for echo: /);
    for (const field of ["text", "times", "tags.0"]) expect(several.output).toContain(`${field}: `);

    const notAnObject = await registry.execute(call("calculator", '"17*23"'), context);
    expect(notAnObject.ok).toBe(false);
    expect(notAnObject.output).toMatch(/^Error: invalid arguments for calculator: arguments: /);
  });

  it("empty arguments mean {} (then the schema decides)", async () => {
    const outcome = await registry.execute(call("boom", "  "), context);
    expect(outcome.output).not.toMatch(/not valid JSON/);
    expect((await registry.execute(call("calculator", ""), context)).output).toMatch(/^Error: invalid arguments for calculator/);
  });

  it("a tool that throws becomes an error with its message, not a crash", async () => {
    expect(await registry.execute(call("boom", "{}"), context)).toEqual({ ok: false, output: "Error: boom failed: the disk is on fire" });
    expect(await registry.execute(call("calculator", '{"expression":"1/0"}'), context)).toEqual({
      ok: false,
      output: "Error: calculator failed: division by zero",
    });
  });

  it("an unknown tool is an error listing the tools that exist", async () => {
    const outcome = await registry.execute(call("rm_rf", "{}"), context);
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/^Error: there is no tool named 'rm_rf'/);
    for (const name of ["calculator", "boom", "echo"]) expect(outcome.output).toContain(name);
  });

  it("names and lookup", () => {
    expect(registry.names).toEqual(["calculator", "boom", "echo"]);
    expect(registry.get("echo")).toBe(echo);
    expect(registry.get("nope")).toBeUndefined();
  });
});

describe("ToolRegistry.specs", () => {
  it("describes every tool as an OpenAI function with a JSON schema of its parameters", () => {
    const specs = registry.specs();
    expect(specs.map((s) => s.type)).toEqual(["function", "function", "function"]);
    const byName = Object.fromEntries(specs.map((s) => [(s as any).function.name, (s as any).function]));

    expect(byName.calculator.description).toBe(calculator.description);
    expect(byName.calculator.parameters).toMatchObject({
      type: "object",
      properties: { expression: { type: "string", minLength: 1, maxLength: 500 } },
      required: ["expression"],
    });

    const echoSchema = byName.echo.parameters;
    expect(echoSchema.type).toBe("object");
    expect(echoSchema.properties.text).toMatchObject({ type: "string", minLength: 1, description: "what to echo" });
    expect(echoSchema.properties.times).toMatchObject({ type: "integer", minimum: 1, maximum: 3, default: 1 });
    expect(echoSchema.properties.tags).toMatchObject({ type: "array", items: { type: "string" } });
    // Input schema: a field with a default or marked optional is not required of the model.
    expect(echoSchema.required).toEqual(["text"]);

    expect(byName.boom.parameters).toMatchObject({ type: "object", properties: {} });
  });

  it("the built-in tools all produce object schemas the API accepts (JSON-serialisable, no $ref to nowhere)", () => {
    const specs = new ToolRegistry([...builtinTools]).specs();
    expect(specs.map((s) => (s as any).function.name)).toEqual(["calculator", "text_stats", "write_artifact", "read_artifact"]);
    for (const spec of specs) {
      const parameters = (spec as any).function.parameters;
      expect(parameters.type).toBe("object");
      expect(JSON.parse(JSON.stringify(parameters))).toEqual(parameters);
      expect(JSON.stringify(parameters)).not.toContain('"$ref"');
    }
  });
});
