import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { agentClients } from "../../functions/toolClients.js";
import { HANDLER_USES, type HandlerUses } from "../../functions/uses.js";
import { stepwiseTools } from "../../functions/workTools.js";
import { declaredGrants, TOOL_GRANT_ACTIONS } from "../../shared/contracts/toolGrants.js";
import { settingsFromEnv } from "../../shared/settings.js";
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

  // The actions whose grants follow each handler's list (functions/uses.ts): every one granted must be
  // one its code can make. States and KMS actions are granted one by one; for SQS, Secrets Manager,
  // Lambda and AgentCore, CDK's grant helpers add companions (GetQueueAttributes, DescribeSecret), so
  // the service must be one its code calls. The table is one grant for every store.
  // Calls the reading cannot see: the A2A SDK calls the A2A server's methods, and setting a push
  // config there seals its token (the stream serves A2A's streaming door).
  const calledByLibraries: Record<string, string[]> = { Stream: ["kms:GenerateDataKey"] };
  it.each(ours.map((f) => [f.path, f] as const))("%s: its role grants nothing its code does not use", (path, fn) => {
    const needed = [...graph.callsOf(fn.entry!).flatMap(iamActionsFor), ...(calledByLibraries[path.split("/").pop()!] ?? [])];
    const service = (action: string) => action.split(":")[0];
    const unused = allowedActions(template, fn.roleLogicalId)
      .filter((action) => /^(states|kms|sqs|secretsmanager|lambda|bedrock-agentcore|s3):/.test(action))
      .filter((action) =>
        /^(states|kms):/.test(action) ? !needed.some((n) => actionMatches(action, n)) : !needed.some((n) => service(n) === service(action)),
      );
    expect([...new Set(unused)]).toEqual([]);
  });

  it("each function's environment names the resources its handler uses, and only those", () => {
    const resources = template.toJSON().Resources as Record<string, { Properties: any }>;
    const byName = new Map(ours.map((f) => [f.path.split("/").pop()!, f]));
    for (const [name, uses] of Object.entries(HANDLER_USES) as [string, HandlerUses][]) {
      const fn = byName.get(name);
      expect(fn, name).toBeDefined();
      const variables = Object.keys(resources[fn!.logicalId]!.Properties.Environment.Variables);
      const has = (...ports: string[]) => ports.some((p) => (uses.ports as readonly string[]).includes(p));
      expect(variables.includes("NOTIFY_QUEUE_URL"), `${name}: NOTIFY_QUEUE_URL`).toBe(has("notifyQueue"));
      expect(variables.includes("OPENAI_API_KEY_SECRET_ARN"), `${name}: OPENAI_API_KEY_SECRET_ARN`).toBe(has("model"));
      expect(variables.includes("TOOL_SOURCES_KMS_KEY_ID"), `${name}: TOOL_SOURCES_KMS_KEY_ID`).toBe(has("tools", "secrets"));
      expect(variables.includes("FILES_BUCKET"), `${name}: FILES_BUCKET`).toBe(has("files", "transfers", "tools"));
      // The state machine invokes the steps: they cannot name it (a cycle), and they start runs only by continuing their own.
      expect(variables.includes("STATE_MACHINE_ARN"), `${name}: STATE_MACHINE_ARN`).toBe(
        has("executions") && !fn!.path.includes("/Steps/"),
      );
    }
  });

  it("grants follow the lists: only the doors seal secrets, the notifier only opens them, a step that runs no tool opens none, only the notifier moves messages to the dead letters", () => {
    const allowedOf = (name: string) => allowedActions(template, ours.find((f) => f.path.endsWith(`/${name}`))!.roleLogicalId);
    // Tool source headers and A2A push tokens are sealed where they are set: the API and the stream (A2A's streaming door).
    expect(allowedOf("Api")).toContain("kms:GenerateDataKey");
    expect(allowedOf("Stream")).toContain("kms:GenerateDataKey");
    expect(allowedOf("Stream")).toContain("kms:Decrypt");
    // The notifier opens an A2A push's token to send it, and seals nothing.
    expect(allowedOf("Notify")).toContain("kms:Decrypt");
    expect(allowedOf("Notify")).not.toContain("kms:GenerateDataKey");
    for (const step of ["StartRun", "Summarize", "Finalize", "RecordFailure", "RecordTimeout", "AwaitInterrupt", "ContinueRun"]) {
      expect(allowedOf(step), step).not.toContain("kms:Decrypt");
      expect(allowedOf(step), step).not.toContain("lambda:InvokeFunction");
    }
    for (const step of ["StartRun", "Finalize", "RecordFailure", "RecordTimeout", "RecordTaskFailure"])
      expect(
        allowedOf(step).filter((a) => a.startsWith("states:")),
        step,
      ).toEqual([]);
    const deadLetters = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
    const senders = Object.values(deadLetters)
      .filter((r) => r.Type === "AWS::IAM::Policy")
      .filter((r) =>
        r.Properties.PolicyDocument.Statement.some(
          (st: any) => [st.Action].flat().includes("sqs:SendMessage") && JSON.stringify(st.Resource).includes("DeadLetters"),
        ),
      )
      .flatMap((r) => r.Properties.Roles.map((role: { Ref: string }) => role.Ref));
    expect(senders).toEqual([ours.find((f) => f.path.endsWith("/Notify"))!.roleLogicalId]);
  });

  it("reads the calls from the code: the callback step resumes runs, the API starts and stops them, agents call only the table, the queue and the key", () => {
    const commands = (entry: string) => graph.callsOf(entry).map((c) => c.command);
    expect(commands("functions/steps/awaitInterrupt.ts")).toContain("SendTaskSuccess");
    expect(commands("functions/api/handler.ts")).toEqual(
      expect.arrayContaining(["StartExecution", "StopExecution", "SendTaskSuccess", "GetExecutionHistory"]),
    );
    expect(commands("functions/steps/plan.ts")).toEqual(expect.arrayContaining(["Update", "SendMessage", "GetSecretValue"]));
    // Reads, the log's fill of a number a crashed writer took, and the MCP server's runs (start, decide, cancel).
    expect(commands("functions/stream/handler.ts")).toEqual(
      expect.arrayContaining(["Get", "Put", "Query", "StartExecution", "SendTaskSuccess", "StopExecution"]),
    );
    // The MCP server never calls the model itself: runs do, in their own functions.
    expect(commands("functions/stream/handler.ts")).not.toContain("GetSecretValue");
    expect(commands("functions/steps/plan.ts")).not.toContain("StartExecution");
    // The history budget: Plan measures the history, "Continue in a new execution" starts the next one.
    expect(commands("functions/steps/plan.ts")).toContain("GetExecutionHistory");
    expect(commands("functions/steps/continueRun.ts")).toContain("StartExecution");
    expect(commands("functions/steps/finalize.ts")).not.toContain("GetExecutionHistory");
    // Tools run where an agent calls them: run_code invokes the sandbox, file reads get objects.
    expect(commands("functions/steps/executeTask.ts")).toEqual(expect.arrayContaining(["Invoke", "GetObject"]));
    expect(commands("functions/steps/finalize.ts")).not.toContain("Invoke");
  });

  it("the state machine's definition invokes a published version of every step function, and its role may invoke every version of each (runs keep the versions they started on), and nothing else", () => {
    const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
    const [machine] = Object.values(resources).filter((r) => r.Type === "AWS::StepFunctions::StateMachine");
    const referenced = new Set<string>();
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (value && typeof value === "object") {
        const ref = (value as Record<string, unknown>)["Fn::GetAtt"] ?? [(value as Record<string, unknown>).Ref];
        if (Array.isArray(ref) && typeof ref[0] === "string") referenced.add(ref[0]);
        Object.values(value).forEach(collect);
      }
    };
    collect(machine!.Properties.DefinitionString);
    const steps = ours.filter((f) => f.path.includes("/Steps/")).map((f) => f.logicalId);
    // Only versions, never a function itself (which a deploy changes under a running execution).
    expect([...referenced].filter((id) => resources[id]?.Type === "AWS::Lambda::Function")).toEqual([]);
    const versions = [...referenced].filter((id) => resources[id]?.Type === "AWS::Lambda::Version");
    expect(versions.map((id) => resources[id]!.Properties.FunctionName.Ref).sort()).toEqual([...steps].sort());
    const role = machine!.Properties.RoleArn["Fn::GetAtt"][0];
    const statements = Object.values(resources)
      .filter((r) => r.Type === "AWS::IAM::Policy" && r.Properties.Roles.some((x: { Ref: string }) => x.Ref === role))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    const invokable = statements
      .filter((st: any) => [st.Action].flat().includes("lambda:InvokeFunction"))
      .flatMap((st: any) => [st.Resource].flat());
    // arn:…:function:Name:* — every version of the function, those of earlier deploys too.
    const everyVersion = new Set(
      invokable.filter((r: any) => r["Fn::Join"]?.[1]?.[1] === ":*").map((r: any) => r["Fn::Join"][1][0]["Fn::GetAtt"]?.[0]),
    );
    for (const id of steps) expect(everyVersion.has(id), id).toBe(true);
    const other = invokable.filter(
      (r: any) =>
        !(r["Fn::Join"]?.[1]?.[1] === ":*" && steps.includes(r["Fn::Join"][1][0]["Fn::GetAtt"]?.[0])) && !versions.includes(r.Ref),
    );
    expect(other).toEqual([]);
    expect(
      statements.flatMap((st: any) => [st.Action].flat()).filter((a: string) => !/^(lambda:InvokeFunction|xray:|logs:)/.test(a)),
    ).toEqual([]);
  });

  it("each tool declares the grants its code needs (S3 and Lambda calls), every tool an agent may get is checked, and the stack grants the declarations", () => {
    // Every tool Stepwise may give an agent, search over the run's files included (the widest set),
    // with each runtime of run_code (its code calls the sandbox function or the code interpreter).
    const widest = { TABLE_NAME: "t", WEB_SEARCH_PROVIDER: "files" };
    const tools = stepwiseTools(settingsFromEnv(widest), agentClients("us-east-1"));
    const onAgentCore = stepwiseTools(
      settingsFromEnv({ ...widest, SANDBOX_RUNTIME: "agentcore", CODE_INTERPRETER_ID: "ci-1" }),
      agentClients("us-east-1"),
    );
    const modules: Record<string, string[]> = {
      "shared/tools/calculator.ts": ["calculator"],
      "shared/tools/textStats.ts": ["text_stats"],
      "shared/tools/askUser.ts": ["ask_user"],
      "shared/tools/artifacts.ts": ["write_artifact", "read_artifact"],
      "shared/tools/runCode.ts": ["run_code"],
      "shared/tools/web.ts": ["web_fetch", "web_search", "deep_search"],
      "shared/tools/writeReport.ts": ["write_report"],
      "shared/tools/chart.ts": ["chart"],
    };
    expect(tools.map((t) => t.name).sort()).toEqual(Object.values(modules).flat().sort());
    for (const [file, names] of Object.entries(modules)) {
      const declared = declaredGrants([...tools, ...onAgentCore].filter((t) => names.includes(t.name))).flatMap(
        (g) => TOOL_GRANT_ACTIONS[g],
      );
      const needed = graph
        .callsOfMembers(file)
        .filter((c) => ["client-s3", "client-lambda", "client-bedrock-agentcore"].includes(c.sdkPackage))
        .flatMap(iamActionsFor);
      // Every call the tools' code can make is declared (what the graph reads is at least what runs).
      expect(
        needed.filter((action) => !declared.includes(action as never)),
        file,
      ).toEqual([]);
    }
    // The stack grants the agents what the declarations say (infra/aws/stepwise.ts): run_code's sandbox among them.
    expect(tools.find((t) => t.name === "run_code")!.grants).toContain("sandbox:invoke");
    expect(onAgentCore.find((t) => t.name === "run_code")!.grants).toContain("interpreter:invoke");
    expect(allowedActions(template, ours.find((f) => f.path.endsWith("/Steps/ExecuteTask"))!.roleLogicalId)).toContain(
      "lambda:InvokeFunction",
    );
  });

  it("the callback step's permission to resume is its own policy, on the state machine only", () => {
    const awaitInterrupt = ours.find((f) => f.path.endsWith("/AwaitInterrupt"))!;
    expect(allowedActions(template, awaitInterrupt.roleLogicalId)).toContain("states:SendTaskSuccess");
    const plan = ours.find((f) => f.path.endsWith("/Plan"))!;
    expect(allowedActions(template, plan.roleLogicalId)).not.toContain("states:SendTaskSuccess");
  });
});
