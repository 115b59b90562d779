import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { actionMatches, iamActionsFor, SdkCallGraph } from "../support/sdkCalls.js";
import { allowedActions, functionsOf, synthesize } from "../support/template.js";

/**
 * Every AWS call a function's code can make is allowed by that function's role: the calls are read
 * from the code (test/support/sdkCalls.ts), the permissions from the synthesized template. A new SDK
 * call without a grant, or a new function whose code cannot be read, fails here, not in production.
 */
const root = path.resolve(import.meta.dirname, "../..");
const { stack, template } = synthesize();
const functions = functionsOf(stack);
const ours = functions.filter((f) => f.entry);
let graph: SdkCallGraph;

// Reading the code needs the type checker over the whole project: slow on a busy machine, so it
// runs once here, with room, and the tests below read its cached answers.
beforeAll(() => {
  graph = new SdkCallGraph(root);
  for (const fn of ours) graph.callsOf(fn.entry!);
}, 600_000);

describe("IAM coverage", () => {
  it("finds the code of every function that runs Stepwise code (built with StepwiseFunction)", () => {
    expect(functions.filter((f) => f.unknownCode).map((f) => f.path)).toEqual([]);
    expect(ours.length).toBeGreaterThanOrEqual(14);
  });

  it.each(ours.map((f) => [f.path, f] as const))("%s: its role allows every AWS call its code can make", (_path, fn) => {
    const allowed = allowedActions(template, fn.roleLogicalId);
    const missing = graph
      .callsOf(fn.entry!)
      .flatMap((call) => iamActionsFor(call).map((action) => ({ action, call })))
      .filter(({ action }) => !allowed.some((pattern) => actionMatches(pattern, action)))
      .map(({ action, call }) => `${action} (${call.command}, reached by ${call.path.join(" → ")})`);
    expect(missing).toEqual([]);
  });

  it("reads the calls from the code: the callback step resumes runs, the API starts and stops them, agents call only the table, the queue and the key", () => {
    const commands = (entry: string) => graph.callsOf(entry).map((c) => c.command);
    expect(commands("functions/steps/awaitInterrupt.ts")).toContain("SendTaskSuccess");
    expect(commands("functions/api/handler.ts")).toEqual(expect.arrayContaining(["StartExecution", "StopExecution", "SendTaskSuccess", "GetExecutionHistory"]));
    expect(commands("functions/steps/plan.ts")).toEqual(expect.arrayContaining(["Update", "SendMessage", "GetSecretValue"]));
    // Reads, the log's fill of a number a crashed writer took, and the MCP server's runs (start, decide, cancel).
    expect(commands("functions/stream/handler.ts")).toEqual(expect.arrayContaining(["Get", "Put", "Query", "StartExecution", "SendTaskSuccess", "StopExecution"]));
    // The MCP server never calls the model itself: runs do, in their own functions.
    expect(commands("functions/stream/handler.ts")).not.toContain("GetSecretValue");
    expect(commands("functions/steps/plan.ts")).not.toContain("StartExecution");
    // Tools run where an agent calls them: run_code invokes the sandbox, file reads get objects.
    expect(commands("functions/steps/executeTask.ts")).toEqual(expect.arrayContaining(["Invoke", "GetObject"]));
    expect(commands("functions/steps/finalize.ts")).not.toContain("Invoke");
  });

  it("the state machine's role may invoke every function its definition invokes, and nothing else", () => {
    const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
    const [machine] = Object.values(resources).filter((r) => r.Type === "AWS::StepFunctions::StateMachine");
    const invoked = new Set<string>();
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (value && typeof value === "object") {
        const ref = (value as Record<string, unknown>)["Fn::GetAtt"];
        if (Array.isArray(ref)) invoked.add(ref[0] as string);
        Object.values(value).forEach(collect);
      }
    };
    collect(machine!.Properties.DefinitionString);
    const steps = ours.filter((f) => f.path.includes("/Steps/")).map((f) => f.logicalId);
    expect([...invoked].filter((id) => resources[id]?.Type === "AWS::Lambda::Function").sort()).toEqual([...steps].sort());
    const role = machine!.Properties.RoleArn["Fn::GetAtt"][0];
    const statements = Object.values(resources)
      .filter((r) => r.Type === "AWS::IAM::Policy" && r.Properties.Roles.some((x: { Ref: string }) => x.Ref === role))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    const invokable = new Set(statements.filter((st: any) => [st.Action].flat().includes("lambda:InvokeFunction")).flatMap((st: any) => [st.Resource].flat()).map((r: any) => r["Fn::GetAtt"]?.[0] ?? r["Fn::Join"]?.[1]?.[0]?.["Fn::GetAtt"]?.[0]));
    for (const id of steps) expect(invokable.has(id), id).toBe(true);
    expect(statements.flatMap((st: any) => [st.Action].flat()).filter((a: string) => !/^(lambda:InvokeFunction|xray:|logs:)/.test(a))).toEqual([]);
  });

  it("the callback step's permission to resume is its own policy, on the state machine only", () => {
    const awaitInterrupt = ours.find((f) => f.path.endsWith("/AwaitInterrupt"))!;
    expect(allowedActions(template, awaitInterrupt.roleLogicalId)).toContain("states:SendTaskSuccess");
    const plan = ours.find((f) => f.path.endsWith("/Plan"))!;
    expect(allowedActions(template, plan.roleLogicalId)).not.toContain("states:SendTaskSuccess");
  });
});
