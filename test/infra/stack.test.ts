import { Annotations, Match } from "aws-cdk-lib/assertions";
import { describe, expect, it, vi } from "vitest";
import { HANDLER_USES, type HandlerUses } from "../../functions/uses.js";
import { FUNCTION_ENVIRONMENT, settingsFromContext } from "../../infra/aws/config.js";
import { AGENT_STEPS } from "../../infra/aws/handlers.js";
import { MAX_SANDBOX_MEMORY_MB, SANDBOX_MEMORY } from "../../shared/contracts/sandboxMemory.js";
import { RUN_FAULT_METRIC } from "../../shared/run/lifecycle.js";
import { allowedActions, CDK_JSON_CONTEXT, functionsOf, MODEL_KEY_SECRET_ARN, readableSecrets, synthesize } from "../support/template.js";

/** The deployed stack's operations story and configuration, read from the synthesized template. */
const { stack, template } = synthesize({ openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN, alarmEmail: "ops@example.com" });
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
const ofType = (type: string) => Object.values(resources).filter((r) => r.Type === type);
const ours = functionsOf(stack).filter((f) => f.entry);
/** What a function's handler uses (functions/uses.ts), by the function's construct id; the sandbox uses nothing. */
const usesOf = (fn: { path: string }): HandlerUses | undefined => (HANDLER_USES as Record<string, HandlerUses>)[fn.path.split("/").pop()!];
const callsModel = (fn: { path: string }) => (usesOf(fn)?.ports as readonly string[] | undefined)?.includes("model") ?? false;

describe("logging and tracing", () => {
  it("every function traces with X-Ray (the sandbox apart: no route out) and names its Powertools service and namespace", () => {
    for (const fn of ours) {
      const props = resources[fn.logicalId]!.Properties;
      expect(props.TracingConfig, fn.path).toEqual(fn.path.endsWith("/Sandbox") ? undefined : { Mode: "Active" });
      expect(props.Environment.Variables, fn.path).toMatchObject({
        POWERTOOLS_SERVICE_NAME: "stepwise",
        POWERTOOLS_METRICS_NAMESPACE: "Stepwise",
      });
    }
  });

  it("the functions that send an ended run's GenAI spans to X-Ray trace actively and may put trace segments", () => {
    const exporters = ours.filter((fn) => (usesOf(fn)?.ports as readonly string[] | undefined)?.includes("traces"));
    expect(exporters.map((fn) => fn.path.split("/").pop())).toEqual(["Notify"]);
    for (const fn of exporters) {
      const props = resources[fn.logicalId]!.Properties;
      // Active tracing runs the X-Ray daemon beside the function and names it (AWS_XRAY_DAEMON_ADDRESS, Lambda's own variable).
      expect(props.TracingConfig, fn.path).toEqual({ Mode: "Active" });
      expect(Object.keys(props.Environment.Variables), fn.path).not.toContain("AWS_XRAY_DAEMON_ADDRESS");
      // The daemon sends the segments with the function's role.
      expect(allowedActions(template, fn.roleLogicalId), fn.path).toContain("xray:PutTraceSegments");
    }
  });

  it("the state machine logs errors without execution data, and traces", () => {
    template.hasResourceProperties("AWS::StepFunctions::StateMachine", {
      LoggingConfiguration: Match.objectLike({ Level: "ERROR", IncludeExecutionData: false }),
      TracingConfiguration: { Enabled: true },
    });
  });

  it("the state machine's log group is under /aws/vendedlogs/states/, named after the stack and its id", () => {
    const [[id, group]] = Object.entries(template.findResources("AWS::Logs::LogGroup")).filter(([logicalId]) =>
      logicalId.includes("StateMachineLogs"),
    ) as [string, { Properties: { LogGroupName: unknown } }][];
    expect(group.Properties.LogGroupName).toEqual({
      "Fn::Join": [
        "",
        ["/aws/vendedlogs/states/", { Ref: "AWS::StackName" }, "-", { "Fn::Select": [2, { "Fn::Split": ["/", { Ref: "AWS::StackId" }] }] }],
      ],
    });
    template.hasResourceProperties("AWS::StepFunctions::StateMachine", {
      LoggingConfiguration: Match.objectLike({
        Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { "Fn::GetAtt": [id, "Arn"] } } }],
      }),
    });
  });

  it("the HTTP API writes access logs and is throttled", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: "$default",
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
      DefaultRouteSettings: Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 }),
    });
  });
});

describe("agent protocols", () => {
  it("the HTTP API routes the A2A agent card (GET), /a2a and /mcp (POST) to the API function; the stream function may start, decide and cancel runs for the streamed /a2a", () => {
    const routes = Object.fromEntries(ofType("AWS::ApiGatewayV2::Route").map((r) => [r.Properties.RouteKey as string, r.Properties]));
    expect(Object.keys(routes)).toEqual(expect.arrayContaining(["GET /.well-known/agent-card.json", "POST /a2a", "POST /mcp"]));
    const integrationOf = (key: string) => routes[key]!.Target["Fn::Join"][1][1].Ref as string;
    const apiIntegration = integrationOf("POST /mcp");
    expect(integrationOf("POST /a2a")).toBe(apiIntegration);
    expect(integrationOf("GET /.well-known/agent-card.json")).toBe(apiIntegration);
    // A browser's preflight reaches the handler (which answers CORS): without a route the HTTP API answers 404.
    expect(integrationOf("OPTIONS /mcp")).toBe(apiIntegration);
    expect(integrationOf("OPTIONS /a2a")).toBe(apiIntegration);
    // No authorizer on the card: it is public, as A2A discovery needs; /a2a checks the API key itself.
    expect(routes["GET /.well-known/agent-card.json"]!.AuthorizationType ?? "NONE").toBe("NONE");
    const stream = ours.find((f) => f.path.endsWith("/Stream"))!;
    const streamActions = allowedActions(template, stream.roleLogicalId);
    for (const action of ["states:StartExecution", "states:StopExecution", "states:SendTaskSuccess", "s3:PutObject"])
      expect(streamActions, action).toContain(action);
  });
});

describe("alarms and dashboard", () => {
  const alarms = ofType("AWS::CloudWatch::Alarm").map((a) => a.Properties);
  const named = (metric: string) => alarms.filter((a) => a.MetricName === metric);

  it("alarm on dead letters, timed-out/throttled executions, API 5xx", () => {
    expect(named("ApproximateNumberOfMessagesVisible")).toHaveLength(2); // both dead-letter queues
    for (const metric of ["ExecutionsTimedOut", "ExecutionThrottled", "5xx"]) expect(named(metric), metric).toHaveLength(1);
  });

  it("alarm on Stepwise's own run faults, not on every failed execution (a run failing on its own input is the user's)", () => {
    expect(named("ExecutionsFailed")).toEqual([]);
    expect(named(RUN_FAULT_METRIC)).toEqual([
      expect.objectContaining({
        Namespace: "Stepwise",
        Dimensions: [{ Name: "service", Value: "stepwise" }],
        Statistic: "Sum",
        Threshold: 1,
      }),
    ]);
  });

  /** The alarm whose metric math uses these metrics: its expression and the metrics by id. */
  const mathAlarm = (metricName: string) =>
    alarms
      .filter((a) => (a.Metrics ?? []).some((m: any) => m.MetricStat?.Metric?.MetricName === metricName))
      .map((a) => ({
        threshold: a.Threshold,
        expression: a.Metrics.find((m: any) => m.Expression).Expression as string,
        metrics: Object.fromEntries(a.Metrics.filter((m: any) => m.MetricStat).map((m: any) => [m.Id, m.MetricStat.Metric])),
      }));

  it("alarm on Step Functions throttling any other API Stepwise calls, an API without calls not hiding the rest", () => {
    const [throttled, ...more] = mathAlarm("ThrottledEvents");
    expect(more).toEqual([]);
    const apis = Object.values(throttled!.metrics).map((m: any) => [m.Namespace, m.Dimensions[0].Value]);
    expect(apis.sort()).toEqual(
      ["DescribeExecution", "RedriveExecution", "SendTaskSuccess", "StartExecution", "StopExecution"].map((api) => ["AWS/States", api]),
    );
    for (const id of Object.keys(throttled!.metrics)) expect(throttled!.expression).toContain(`FILL(${id}, 0)`);
    expect(throttled!.threshold).toBe(1);
  });

  it("alarm when the notification queue's oldest message has waited 5 minutes", () => {
    const [age, ...more] = named("ApproximateAgeOfOldestMessage");
    expect(more).toEqual([]);
    expect(age).toMatchObject({ Namespace: "AWS/SQS", Statistic: "Maximum", Threshold: 300 });
    const queueId = Object.entries(resources).find(([id, r]) => r.Type === "AWS::SQS::Queue" && id.includes("Notifications"))![0];
    expect(age.Dimensions).toEqual([{ Name: "QueueName", Value: { "Fn::GetAtt": [queueId, "QueueName"] } }]);
  });

  it("alarm at 80 % of the account's Lambda concurrency quota, whatever the quota is", () => {
    const [concurrency, ...more] = mathAlarm("ResourceCount");
    expect(more).toEqual([]);
    const [[id, usage]] = Object.entries(concurrency!.metrics) as [string, any][];
    expect(usage).toMatchObject({
      Namespace: "AWS/Usage",
      Dimensions: expect.arrayContaining([
        { Name: "Service", Value: "Lambda" },
        { Name: "Resource", Value: "ConcurrentExecutions" },
      ]),
    });
    expect(concurrency!.expression).toBe(`100 * ${id} / SERVICE_QUOTA(${id})`);
    expect(concurrency!.threshold).toBe(80);
  });

  it("alarm on Step Functions throttling GetExecutionHistory (20 calls/s per account), the history budget's count", () => {
    expect(named("ThrottledEvents").map((a) => [a.Namespace, a.Dimensions])).toEqual([
      ["AWS/States", [{ Name: "APIName", Value: "GetExecutionHistory" }]],
    ]);
  });

  it("alarm on errors and throttles of every function, and on DynamoDB throttling", () => {
    expect(named("Errors")).toHaveLength(ours.length);
    expect(named("Throttles")).toHaveLength(ours.length);
    expect(alarms.some((a) => (a.Metrics ?? []).some((m: any) => m.MetricStat?.Metric?.MetricName === "ThrottledRequests"))).toBe(true);
  });

  it("every alarm notifies the SNS topic when an address is given; none without", () => {
    const topic = Object.entries(resources).find(([, r]) => r.Type === "AWS::SNS::Topic")![0];
    for (const alarm of alarms) expect(alarm.AlarmActions).toEqual([{ Ref: topic }]);
    template.hasResourceProperties("AWS::SNS::Subscription", { Protocol: "email", Endpoint: "ops@example.com" });
    const quiet = synthesize({ openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN }).template;
    quiet.resourceCountIs("AWS::SNS::Topic", 0);
  });

  it("one dashboard", () => {
    template.resourceCountIs("AWS::CloudWatch::Dashboard", 1);
  });
});

describe("limits", () => {
  it("no function reserves concurrency by default (a new account's quota has no room for it); the API and the stream reserve what the settings say", () => {
    for (const fn of ours) expect(resources[fn.logicalId]!.Properties.ReservedConcurrentExecutions, fn.path).toBeUndefined();
    const reserved = synthesize({ openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN, apiReservedConcurrency: 30, streamReservedConcurrency: 20 });
    const reservedResources = reserved.template.toJSON().Resources as Record<string, { Properties: any }>;
    const reservation = (suffix: string) =>
      reservedResources[functionsOf(reserved.stack).find((f) => f.path.endsWith(suffix))!.logicalId]!.Properties
        .ReservedConcurrentExecutions;
    expect([reservation("/Api"), reservation("/Stream"), reservation("/Notify")]).toEqual([30, 20, undefined]);
  });

  it("the notifier's batch fits its timeout and the queue's visibility is 6× it", () => {
    const byPath = (suffix: string) => resources[ours.find((f) => f.path.endsWith(suffix))!.logicalId]!.Properties;
    const notify = byPath("/Notify");
    const mapping = ofType("AWS::Lambda::EventSourceMapping")[0]!.Properties;
    expect(mapping.BatchSize * 10).toBeLessThan(notify.Timeout); // 10 s per webhook attempt
    const queues = ofType("AWS::SQS::Queue").map((q) => q.Properties);
    expect(queues.find((q) => q.RedrivePolicy)!.VisibilityTimeout).toBeGreaterThanOrEqual(6 * notify.Timeout);
  });

  it("the table is protected from deletion; the EventBridge target has a dead-letter queue", () => {
    template.hasResourceProperties("AWS::DynamoDB::Table", { DeletionProtectionEnabled: true });
    template.hasResourceProperties("AWS::Events::Rule", { Targets: [Match.objectLike({ DeadLetterConfig: { Arn: Match.anyValue() } })] });
  });
});

describe("a small account (10 concurrent executions)", () => {
  const small = { openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN, accountConcurrency: 10, maxConcurrency: 2 };
  const warningsOf = (synthesized: ReturnType<typeof synthesize>) =>
    Annotations.fromStack(synthesized.stack)
      .findWarning("*", Match.stringLikeRegexp("concurren"))
      .map((w) => String(w.entry.data));

  it("the profile (-c accountConcurrency=10 -c maxConcurrency=2) runs two executors at once, reserves nothing and synthesizes without a warning", () => {
    const profile = synthesize(small as any);
    const [machine] = Object.values(profile.template.toJSON().Resources as Record<string, any>).filter(
      (r) => r.Type === "AWS::StepFunctions::StateMachine",
    );
    const definition = JSON.stringify(machine.Properties.DefinitionString);
    expect(definition).toContain('\\"MaxConcurrency\\":2');
    for (const fn of functionsOf(profile.stack).filter((f) => f.entry))
      expect(profile.template.toJSON().Resources[fn.logicalId].Properties.ReservedConcurrentExecutions, fn.path).toBeUndefined();
    expect(warningsOf(profile)).toEqual([]);
    expect(warningsOf(synthesize())).toEqual([]); // nor does the default (a quota of 1,000)
  });

  it("synth warns when the reservations or a run's executors exceed the stated quota, naming the numbers and the way out", () => {
    const executors = warningsOf(synthesize({ ...small, maxConcurrency: 8 } as any));
    expect(executors).toHaveLength(1);
    expect(executors[0]).toMatch(/12 functions busy \(maxConcurrency 8 executors \+ 4 beside them\), more than the 10 unreserved/);
    expect(executors[0]).toContain("-c maxConcurrency=2");
    const reserved = warningsOf(synthesize({ ...small, apiReservedConcurrency: 2 } as any));
    expect(reserved[0]).toMatch(
      /Reserved concurrency .* = 2\) exceeds what an account with a quota of 10 concurrent executions can reserve \(0/,
    );
    const large = warningsOf(
      synthesize({ openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN, apiReservedConcurrency: 500, streamReservedConcurrency: 500 }),
    );
    expect(large.some((w) => /= 1000\) exceeds .* quota of 1000 .* \(900/.test(w))).toBe(true);
  });
});

describe("code", () => {
  it("no function loads source maps at start; only the steps that run an agent carry the layers (the tokenizer's, the work products' libraries, the policy engine), and the API the policy engine", () => {
    const agentSteps = new Set<string>(AGENT_STEPS);
    const layers = ofType("AWS::Lambda::LayerVersion");
    expect(layers).toHaveLength(3);
    const layersOf = (path: string) => (agentSteps.has(path.split("/").at(-1)!) ? 3 : path.endsWith("/Api") ? 1 : 0);
    for (const fn of ours) {
      const props = resources[fn.logicalId]!.Properties;
      expect(props.Environment.Variables.NODE_OPTIONS ?? "", fn.path).not.toContain("source-maps");
      expect(props.Layers ?? [], fn.path).toHaveLength(layersOf(fn.path));
    }
  });
});

describe("agent memory", () => {
  it("agentMemoryMb sizes the steps that run an agent (512 MB by default), and only those", () => {
    const agentSteps = new Set<string>(AGENT_STEPS);
    const memoryOf = (synthesized: ReturnType<typeof synthesize>) => {
      const all = synthesized.template.toJSON().Resources as Record<string, { Properties: any }>;
      return functionsOf(synthesized.stack)
        .filter((f) => f.path.includes("/Steps/"))
        .map((f) => [agentSteps.has(f.path.split("/").at(-1)!), all[f.logicalId]!.Properties.MemorySize]);
    };
    expect(new Set(memoryOf({ stack, template } as ReturnType<typeof synthesize>).map(([, mb]) => mb))).toEqual(new Set([512]));
    const sized = memoryOf(synthesize({ openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN, agentMemoryMb: 1_536 }));
    for (const [agent, mb] of sized) expect(mb).toBe(agent ? 1_536 : 512);
    expect(() => settingsFromContext((key) => ({ agentMemoryMb: "256" })[key])).toThrow(/agentMemoryMb/);
  });
});

describe("deploys leave running runs alone", () => {
  const full = template.toJSON().Resources as Record<
    string,
    { Type: string; Properties: any; DeletionPolicy?: string; UpdateReplacePolicy?: string }
  >;
  const steps = ours.filter((f) => f.path.includes("/Steps/"));
  const idsOf = (type: string) =>
    Object.entries(full)
      .filter(([, r]) => r.Type === type)
      .map(([id]) => id);

  it("every step function is published as a version that later deploys keep, behind the alias live", () => {
    const versions = idsOf("AWS::Lambda::Version").map((id) => full[id]!);
    for (const fn of steps) {
      const own = versions.filter((v) => v.Properties.FunctionName.Ref === fn.logicalId);
      expect(own, fn.path).toHaveLength(1);
      expect([own[0]!.DeletionPolicy, own[0]!.UpdateReplacePolicy], fn.path).toEqual(["Retain", "Retain"]);
      const aliases = ofType("AWS::Lambda::Alias").filter((a) => a.Properties.FunctionName.Ref === fn.logicalId);
      expect(
        aliases.map((a) => a.Properties.Name),
        fn.path,
      ).toEqual(["live"]);
    }
  });

  it("every Task state invokes a version-qualified ARN, so an execution calls the code it started with", () => {
    const [machine] = ofType("AWS::StepFunctions::StateMachine");
    const parts = machine!.Properties.DefinitionString["Fn::Join"][1] as unknown[];
    const refs = parts.filter(
      (p): p is { Ref: string } =>
        typeof p === "object" && p !== null && "Ref" in p && !String((p as { Ref: string }).Ref).startsWith("AWS::"),
    );
    expect(refs.length).toBeGreaterThanOrEqual(steps.length);
    for (const ref of refs) expect(full[ref.Ref]?.Type, ref.Ref).toBe("AWS::Lambda::Version");
    expect(parts.some((p) => typeof p === "object" && p !== null && "Fn::GetAtt" in p)).toBe(false);
  });

  it("the state machine is versioned (each revision a version that later deploys keep) behind the alias live, and the API starts runs through the alias", () => {
    const [versionId, ...more] = idsOf("AWS::StepFunctions::StateMachineVersion");
    expect(more).toEqual([]);
    const version = full[versionId!]!;
    const machineId = idsOf("AWS::StepFunctions::StateMachine")[0]!;
    expect(version.Properties).toMatchObject({
      StateMachineArn: { Ref: machineId },
      StateMachineRevisionId: { "Fn::GetAtt": [machineId, "StateMachineRevisionId"] },
    });
    expect([version.DeletionPolicy, version.UpdateReplacePolicy]).toEqual(["Retain", "Retain"]);
    const [aliasId] = idsOf("AWS::StepFunctions::StateMachineAlias");
    expect(full[aliasId!]!.Properties).toEqual(
      expect.objectContaining({
        Name: "live",
        RoutingConfiguration: [{ StateMachineVersionArn: { "Fn::GetAtt": [versionId, "Arn"] }, Weight: 100 }],
      }),
    );
    const api = ours.find((f) => f.path.endsWith("/Api"))!;
    expect(full[api.logicalId]!.Properties.Environment.Variables.STATE_MACHINE_ARN).toEqual({ "Fn::GetAtt": [aliasId, "Arn"] });
    const starts = ofType("AWS::IAM::Policy")
      .filter((p) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === api.roleLogicalId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .filter((st: any) => [st.Action].flat().includes("states:StartExecution"));
    expect(starts.flatMap((st: any) => [st.Resource].flat())).toEqual([{ Ref: machineId }, { "Fn::GetAtt": [aliasId, "Arn"] }]);
  });
});

describe("what a pinned run calls is pinned too", () => {
  const full = template.toJSON().Resources as Record<string, { Type: string; Properties: any; DeletionPolicy?: string }>;
  const sandbox = ours.find((f) => f.path.endsWith("/Sandbox"))!;

  it("the sandbox is published per deploy (kept), and every step function calls this deploy's sandbox version, not the newest code", () => {
    const [versionId, ...more] = Object.entries(full)
      .filter(([, r]) => r.Type === "AWS::Lambda::Version" && r.Properties.FunctionName.Ref === sandbox.logicalId)
      .map(([id]) => id);
    expect(more).toEqual([]);
    expect(full[versionId!]!.DeletionPolicy).toBe("Retain");
    const callers = ours.filter((f) => full[f.logicalId]!.Properties.Environment?.Variables?.SANDBOX_FUNCTION_NAME);
    expect(callers.map((f) => f.path.split("/").pop())).toEqual(expect.arrayContaining(["ExecuteTask", "AgentTurn"]));
    for (const fn of callers)
      expect(full[fn.logicalId]!.Properties.Environment.Variables.SANDBOX_FUNCTION_NAME, fn.path).toEqual({ Ref: versionId });
  });

  it("ContinueRun may start a run's next execution on any version of the state machine, and read which one its run is on", () => {
    const continueRun = ours.find((f) => f.path.endsWith("/ContinueRun"))!;
    const [machineId] = Object.entries(full).find(([, r]) => r.Type === "AWS::StepFunctions::StateMachine")!;
    const statements = ofType("AWS::IAM::Policy")
      .filter((p) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === continueRun.roleLogicalId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    const starts = statements.filter((st: any) => [st.Action].flat().includes("states:StartExecution"));
    expect(starts.flatMap((st: any) => [st.Resource].flat())).toEqual([
      { Ref: machineId },
      { "Fn::Join": ["", [{ Ref: machineId }, ":*"]] },
    ]);
    expect(statements.some((st: any) => [st.Action].flat().includes("states:DescribeExecution"))).toBe(true);
  });
});

describe("a change to a layer alone reaches new runs", () => {
  /** Each step function's version resource id (what the state machine invokes), by construct path. */
  const versionIds = (synthesized: ReturnType<typeof synthesize>) => {
    const all = synthesized.template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
    return Object.fromEntries(
      functionsOf(synthesized.stack)
        .filter((f) => f.path.includes("/Steps/"))
        .map((f) => [
          f.path,
          Object.entries(all).find(([, r]) => r.Type === "AWS::Lambda::Version" && r.Properties.FunctionName.Ref === f.logicalId)![0],
        ]),
    );
  };

  it("a new tokenizer layer (its asset hash) gives the agent steps new version ids, and leaves the other steps' alone", async () => {
    const before = versionIds(synthesize());
    // The same stack with only the tokenizer layer's content changed (its hash names its content).
    vi.resetModules();
    vi.doMock("../../infra/aws/layerHash.js", async (original) => {
      const { layerHash } = await original<typeof import("../../infra/aws/layerHash.js")>();
      return {
        layerHash: (builders: string[], inputs: unknown) =>
          builders.some((b) => b.endsWith("tokenizerLayer.ts")) ? "0".repeat(64) : layerHash(builders, inputs),
      };
    });
    const changed = await import("../support/template.js");
    const after = versionIds(changed.synthesize());
    vi.doUnmock("../../infra/aws/layerHash.js");
    const agentSteps = new Set<string>(AGENT_STEPS);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const [path, id] of Object.entries(before)) {
      if (agentSteps.has(path.split("/").at(-1)!)) expect(after[path], path).not.toBe(id);
      else expect(after[path], path).toBe(id);
    }
  });

  it("cdk.json turns on @aws-cdk/aws-lambda:recognizeLayerVersion, which makes that so", () => {
    expect(CDK_JSON_CONTEXT["@aws-cdk/aws-lambda:recognizeLayerVersion"]).toBe(true);
  });
});

describe("least privilege", () => {
  it("no role may Scan the table or read its streams; the API may seal (GenerateDataKey) and open (Decrypt) with the key, nothing more", () => {
    for (const fn of ours) {
      const actions = allowedActions(template, fn.roleLogicalId);
      expect(
        actions.filter((a) => /^dynamodb:(Scan|.*Stream.*|GetRecords|GetShardIterator)$/.test(a)),
        fn.path,
      ).toEqual([]);
    }
    const api = ours.find((f) => f.path.endsWith("/Api"))!;
    expect(
      allowedActions(template, api.roleLogicalId)
        .filter((a) => a.startsWith("kms:"))
        .sort(),
    ).toEqual(["kms:Decrypt", "kms:GenerateDataKey"]);
  });

  it("download links last at most an hour (a presigned link dies with the credentials that signed it)", () => {
    expect(() => synthesize({ openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN, downloadLinkSeconds: 3_601 })).toThrow(/downloadLinkSeconds/);
  });
});

const MODERATION_KEY_SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:stepwise/moderation-MnOpQr";
const TAVILY_KEY_SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:stepwise/tavily-GhIjKl";
const BRAVE_KEY_SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:stepwise/brave-MnOpQr";

describe("API keys in Secrets Manager", () => {
  it.each([
    ["tavily", { tavilyApiKeySecretArn: TAVILY_KEY_SECRET_ARN }, TAVILY_KEY_SECRET_ARN, "TAVILY_API_KEY_SECRET_ARN"],
    [
      "brave",
      { braveApiKeySecretArn: BRAVE_KEY_SECRET_ARN, tavilyApiKeySecretArn: TAVILY_KEY_SECRET_ARN },
      BRAVE_KEY_SECRET_ARN,
      "BRAVE_API_KEY_SECRET_ARN",
    ],
  ])(
    "webSearchProvider=%s: the agents may read the model's key and the search API's key (only the chosen provider's), nothing else may, and the template holds only the ARN",
    (provider, keys, searchKey, variable) => {
      const { stack: deployed, template: t } = synthesize({
        openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN,
        webSearchProvider: provider,
        ...keys,
      } as any);
      const fns = functionsOf(deployed).filter((f) => f.entry);
      const agents = fns.filter((f) => usesOf(f)?.runsTools);
      expect(agents.length).toBe(3);
      // The model's key to the functions that call the model, the search API's to those that run the agents' tools.
      for (const fn of fns) {
        const expected = [...(callsModel(fn) ? [MODEL_KEY_SECRET_ARN] : []), ...(usesOf(fn)?.runsTools ? [searchKey] : [])];
        expect(readableSecrets(t, fn.roleLogicalId), fn.path).toEqual(expected.sort());
      }
      const executeTask =
        t.toJSON().Resources[agents.find((f) => f.path.endsWith("/ExecuteTask"))!.logicalId].Properties.Environment.Variables;
      expect(executeTask).toMatchObject({ WEB_SEARCH_PROVIDER: provider, [variable]: searchKey });
      expect(executeTask.TAVILY_API_KEY ?? executeTask.BRAVE_API_KEY).toBeUndefined();
    },
  );

  it("without a search API, no search key is readable", () => {
    for (const fn of functionsOf(stack).filter((f) => f.entry))
      expect(readableSecrets(template, fn.roleLogicalId), fn.path).toEqual(callsModel(fn) ? [MODEL_KEY_SECRET_ARN] : []);
  });
});

describe("configuration parity: every deployment setting reaches every function's environment", () => {
  const samples: Record<keyof typeof FUNCTION_ENVIRONMENT, string> = {
    model: "qwen-max",
    openAiBaseUrl: "https://models.example.com/v1",
    openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN,
    moderationBaseUrl: "https://moderation.example.com/v1",
    moderationApiKeySecretArn: MODERATION_KEY_SECRET_ARN,
    moderationModel: "text-moderation-latest",
    functionCallMode: "json",
    roleSettings: '{"planner":{"model":"qwen-plus","reasoningEffort":"low"},"summarizer":{"temperature":0.2,"maxOutputTokens":2000}}',
    fallbackModel: "qwen-turbo",
    maxTokensField: "max_tokens",
    sessionTitles: "false",
    maxPlanIterations: "7",
    maxAgentRounds: "12",
    historyEventBudget: "20000",
    contextBudgetTokens: "64000",
    toolConcurrency: "3",
    maxActiveRunsPerTenant: "5",
    maxSandboxesPerTenant: "3",
    maxOpenStreamsPerTenant: "7",
    maxInputBytes: "10000",
    llmTimeoutMs: "90000",
    llmMaxRetries: "4",
    retentionDays: "14",
    streamMaxSeconds: "120",
    streamHeartbeatMs: "15000",
    mcpCallTimeoutMs: "30000",
    mcpConnectTimeoutMs: "5000",
    toolCatalogCacheMs: "2000",
    maxUploadBytes: "1048576",
    imageMaxBytes: "1048576",
    imageRequestMaxBytes: "4194304",
    downloadLinkSeconds: "120",
    sandboxTimeoutMs: "20000",
    sandboxMemoryMb: "256",
    sandboxRuntime: "pyodide",
    codeInterpreterSessionSeconds: "1800",
    webFetchTimeoutMs: "5000",
    webFetchMaxBytes: "65536",
    webFetchMaxRedirects: "2",
    webFetchAllowHttp: "false",
    webSearchProvider: "searxng",
    searxngUrl: "https://search.example.com",
    tavilyApiKeySecretArn: TAVILY_KEY_SECRET_ARN,
    braveApiKeySecretArn: BRAVE_KEY_SECRET_ARN,
    corsAllowedOrigins: "https://app.example.com,https://admin.example.com:8443",
    streamTokenSeconds: "120",
    modelPriceInputPerMtok: "2.5",
    modelPriceOutputPerMtok: "10",
    modelPrices: '{"my-model":[1,2]}',
  };

  it.each(["props", "-c context"])("set as %s", (how) => {
    const settings = how === "props" ? samples : settingsFromContext((key) => samples[key as keyof typeof samples], {});
    const { stack: configured, template: t } = synthesize(settings as any);
    const env = (logicalId: string) => (t.toJSON().Resources[logicalId].Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
    const fns = functionsOf(configured).filter((f) => f.entry);
    for (const fn of fns) {
      for (const [key, variable] of Object.entries(FUNCTION_ENVIRONMENT)) {
        // The model's key is named only to the functions that call the model.
        const named = (variable !== "OPENAI_API_KEY_SECRET_ARN" && variable !== "MODERATION_API_KEY_SECRET_ARN") || callsModel(fn);
        expect(env(fn.logicalId)[variable], `${fn.path} ${variable}`).toBe(named ? samples[key as keyof typeof samples] : undefined);
      }
    }
  });

  it("every documented variable of the functions' configuration can be set for a deployment", async () => {
    const { readFile } = await import("node:fs/promises");
    const page = await readFile(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    const rows = page.split("\n").filter((l) => l.startsWith("| `"));
    const deployable = new Set(Object.values(FUNCTION_ENVIRONMENT));
    // Rows for the local stack, and variables the stack sets itself, are not deployment settings.
    const documented = rows
      .filter((r) => !r.includes("local stack") && !r.includes("set by the stack"))
      .flatMap((r) => [...r.split("|")[1]!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!));
    expect(documented.length).toBeGreaterThan(8);
    // An API key (the model's, a search API's) is never in a deployment: its secret's ARN is (openAiApiKeySecretArn, …).
    expect(documented.filter((v) => !deployable.has(v as any) && !deployable.has(`${v}_SECRET_ARN` as any))).toEqual([]);
    expect(documented).toEqual(expect.arrayContaining(["OPENAI_API_KEY", "TAVILY_API_KEY", "BRAVE_API_KEY"]));
  });
});

describe("browsers (CORS)", () => {
  it("by default no other origin may call the API or the stream; the stream allows only the console's own origin", () => {
    for (const fn of ours) expect(resources[fn.logicalId]!.Properties.Environment.Variables.CORS_ALLOWED_ORIGINS, fn.path).toBeUndefined();
    const stream = resources[ours.find((f) => f.path.endsWith("/Stream"))!.logicalId]!.Properties.Environment.Variables;
    const httpApi = Object.entries(resources).find(([, r]) => r.Type === "AWS::ApiGatewayV2::Api")![0];
    expect(stream.CONSOLE_ORIGIN).toEqual({ "Fn::GetAtt": [httpApi, "ApiEndpoint"] });
  });
});

describe("settings are checked at synth", () => {
  it.each([
    [{}, /needs a model: give openAiApiKeySecretArn .* or openAiBaseUrl/],
    [
      { openAiApiKeySecretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:stepwise/model-key" },
      /openAiApiKeySecretArn must be the secret's complete ARN/,
    ],
    [{ openAiBaseUrl: "https://x.example.com/v1", maxConcurrency: "41" }, /maxConcurrency/],
    [{ openAiBaseUrl: "https://x.example.com/v1", functionCallMode: "xml" }, /functionCallMode/],
    [{ openAiBaseUrl: "not a url" }, /openAiBaseUrl/],
    [{ openAiBaseUrl: "https://x.example.com/v1", moderationApiKeySecretArn: MODERATION_KEY_SECRET_ARN }, /give that too/],
    [{ openAiBaseUrl: "https://x.example.com/v1", moderationBaseUrl: "no url" }, /moderationBaseUrl/],
    [
      { openAiBaseUrl: "https://x.example.com/v1", corsAllowedOrigins: "https://app.example.com/console" },
      /corsAllowedOrigins must be origins/,
    ],
    [{ openAiBaseUrl: "https://x.example.com/v1", streamTokenSeconds: "86400" }, /streamTokenSeconds/],
    [{ openAiBaseUrl: "https://x.example.com/v1", modelPriceInputPerMtok: "-1" }, /modelPriceInputPerMtok/],
    // Upper bounds: a run's own budgets stop there, and Step Functions ends an execution at 25,000 history events.
    [{ openAiBaseUrl: "https://x.example.com/v1", maxPlanIterations: "21" }, /maxPlanIterations/],
    [{ openAiBaseUrl: "https://x.example.com/v1", maxAgentRounds: "51" }, /maxAgentRounds/],
    [{ openAiBaseUrl: "https://x.example.com/v1", historyEventBudget: "25001" }, /historyEventBudget/],
    [{ openAiBaseUrl: "https://x.example.com/v1", webSearchProvider: "tavily" }, /webSearchProvider=tavily needs tavilyApiKeySecretArn/],
    [
      { openAiBaseUrl: "https://x.example.com/v1", webSearchProvider: "brave", braveApiKeySecretArn: "brave-key" },
      /braveApiKeySecretArn must be the secret's complete ARN/,
    ],
    // A lower bound too: a ReAct turn that waits for a person must fit in a new execution.
    [{ openAiBaseUrl: "https://x.example.com/v1", historyEventBudget: "85" }, /historyEventBudget/],
    // A call's memory beside its heap, the warm spare and the handler must fit the sandbox function's.
    [{ openAiBaseUrl: "https://x.example.com/v1", sandboxMemoryMb: String(MAX_SANDBOX_MEMORY_MB + 1) }, /sandboxMemoryMb/],
  ])("%j fails with a clear message", (context, message) => {
    expect(() => synthesize(settingsFromContext((key) => (context as any)[key], {}) as any)).toThrow(message);
  });
});

describe("the code sandbox", () => {
  const sandbox = ours.find((f) => f.path.endsWith("/Sandbox"))!;
  const props = resources[sandbox.logicalId]!.Properties;

  it("runs in a network with no route out: isolated subnets, no gateway, no NAT, no endpoints, no egress rule", () => {
    const subnets = props.VpcConfig.SubnetIds.map((ref: { Ref: string }) => resources[ref.Ref]!);
    expect(subnets.length).toBeGreaterThanOrEqual(2);
    for (const subnet of subnets) expect(subnet.Properties.MapPublicIpOnLaunch).toBe(false);
    for (const type of [
      "AWS::EC2::InternetGateway",
      "AWS::EC2::NatGateway",
      "AWS::EC2::VPCEndpoint",
      "AWS::EC2::Route",
      "AWS::EC2::EgressOnlyInternetGateway",
      "AWS::EC2::TransitGatewayAttachment",
      "AWS::EC2::VPCPeeringConnection",
    ]) {
      expect(ofType(type), type).toHaveLength(0);
    }
    const [group] = props.VpcConfig.SecurityGroupIds.map((ref: { "Fn::GetAtt": [string] }) => resources[ref["Fn::GetAtt"][0]]!.Properties);
    // CDK's rule that matches no traffic: the group lets nothing out (and nothing in).
    expect(group.SecurityGroupEgress).toEqual([
      { CidrIp: "255.255.255.255/32", Description: "Disallow all traffic", FromPort: 252, IpProtocol: "icmp", ToPort: 86 },
    ]);
    expect(group.SecurityGroupIngress).toBeUndefined();
    template.hasResourceProperties("AWS::EC2::FlowLog", { ResourceType: "VPC", TrafficType: "ALL" });
  });

  it("its role may write its own log group and let Lambda attach it to its own subnets and group, nothing else: no managed policy on *", () => {
    const role = resources[sandbox.roleLogicalId]!.Properties;
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(role.Policies).toBeUndefined();
    const statements = ofType("AWS::IAM::Policy")
      .filter((p) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === sandbox.roleLogicalId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    const byAction = (action: string) => statements.filter((s: any) => [s.Action].flat().includes(action));
    const logGroupId = props.LoggingConfig.LogGroup.Ref as string;
    expect(byAction("logs:PutLogEvents")).toEqual([
      { Action: ["logs:CreateLogStream", "logs:PutLogEvents"], Effect: "Allow", Resource: { "Fn::GetAtt": [logGroupId, "Arn"] } },
    ]);
    const ec2Arn = (resource: string) => ({
      "Fn::Join": ["", ["arn:", { Ref: "AWS::Partition" }, `:ec2:eu-west-1:123456789012:${resource}`]],
    });
    const arnText = (value: unknown) => JSON.stringify(value);
    // Creating an interface names the subnet and group: only the sandbox's own are listed.
    const [create] = byAction("ec2:CreateNetworkInterface");
    expect([create.Action].flat()).toEqual(["ec2:CreateNetworkInterface"]);
    expect(create.Condition).toBeUndefined();
    const subnetIds = props.VpcConfig.SubnetIds.map((ref: { Ref: string }) => ref.Ref);
    const groupId = props.VpcConfig.SecurityGroupIds[0]["Fn::GetAtt"][0];
    const createOn = create.Resource.map(arnText);
    for (const subnet of subnetIds)
      expect(createOn.some((r: string) => r.includes("subnet/") && r.includes(`{"Ref":"${subnet}"}`))).toBe(true);
    expect(createOn.some((r: string) => r.includes(groupId))).toBe(true);
    expect(createOn).toContain(arnText(ec2Arn("network-interface/*")));
    expect(create.Resource).toHaveLength(subnetIds.length + 2);
    // Changing or deleting an interface: any of them, but only in the sandbox's VPC.
    const [change] = byAction("ec2:DeleteNetworkInterface");
    expect(change.Action).toEqual(["ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"]);
    expect(change.Resource).toEqual(ec2Arn("network-interface/*"));
    const vpcId = Object.entries(resources).find(([, r]) => r.Type === "AWS::EC2::VPC")![0];
    expect(arnText(change.Condition.ArnEquals["ec2:Vpc"])).toContain(`{"Ref":"${vpcId}"}`);
    // The Describe calls take no resource: IAM allows them only on *.
    expect(byAction("ec2:DescribeNetworkInterfaces")).toEqual([
      { Action: ["ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"], Effect: "Allow", Resource: "*" },
    ]);
    // Nothing else at all.
    expect(statements).toHaveLength(4);
    // Lambda checks the interface grants when it creates the function: the role's policy comes first.
    const policyId = Object.entries(resources).find(
      ([, r]) => r.Type === "AWS::IAM::Policy" && r.Properties.Roles.some((x: { Ref: string }) => x.Ref === sandbox.roleLogicalId),
    )![0];
    expect((template.toJSON().Resources[sandbox.logicalId] as { DependsOn: string[] }).DependsOn).toContain(policyId);
  });

  it("has the memory its budget adds up to: the largest call, its heap and process, the warm spare, the handler and a margin", () => {
    expect(props.MemorySize).toBe(SANDBOX_MEMORY.functionMb);
    const { functionMb, ...parts } = SANDBOX_MEMORY;
    expect(MAX_SANDBOX_MEMORY_MB + Object.values(parts).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(props.MemorySize);
  });

  it("reserves no concurrency unless the deployment sets it", () => {
    expect(props.ReservedConcurrentExecutions).toBeUndefined();
    const bounded = synthesize({ openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN, sandboxReservedConcurrency: 20 } as any);
    const fn = functionsOf(bounded.stack).find((f) => f.path.endsWith("/Sandbox"))!;
    expect((bounded.template.toJSON().Resources as any)[fn.logicalId].Properties.ReservedConcurrentExecutions).toBe(20);
  });
});

describe("the code interpreter (AgentCore, the default where the region has it)", () => {
  const [interpreter] = ofType("AWS::BedrockAgentCore::CodeInterpreterCustom");
  const interpreterId = Object.entries(resources).find(([, r]) => r === interpreter)?.[0];
  const statementsOf = (roleLogicalId: string) =>
    ofType("AWS::IAM::Policy")
      .filter((p) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleLogicalId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
  const agentCoreActions = ["StartCodeInterpreterSession", "InvokeCodeInterpreter", "StopCodeInterpreterSession"].map(
    (a) => `bedrock-agentcore:${a}`,
  );

  it("runs its sessions in SANDBOX network mode with a role AgentCore assumes for this account that grants nothing", () => {
    expect(interpreter?.Properties.NetworkConfiguration).toEqual({ NetworkMode: "SANDBOX" });
    const roleId = interpreter!.Properties.ExecutionRoleArn["Fn::GetAtt"][0] as string;
    const role = resources[roleId]!.Properties;
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: "sts:AssumeRole",
        Effect: "Allow",
        Principal: { Service: "bedrock-agentcore.amazonaws.com" },
        Condition: { StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } } },
      },
    ]);
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(role.Policies).toBeUndefined();
    expect(statementsOf(roleId)).toEqual([]);
  });

  it("the functions that run the agents' tools may start, invoke and stop sessions of this interpreter alone; no other function may", () => {
    const onInterpreter = { "Fn::GetAtt": [interpreterId, "CodeInterpreterArn"] };
    for (const fn of ours) {
      const statements = statementsOf(fn.roleLogicalId).filter((s: any) =>
        [s.Action].flat().some((a: string) => a.startsWith("bedrock-agentcore:")),
      );
      // The functions that run the agents' tools get what the tools declare (as the sandbox's invoke); no other function.
      if (!usesOf(fn)?.runsTools) {
        expect(statements, fn.path).toEqual([]);
        continue;
      }
      expect(statements, fn.path).toEqual([{ Action: agentCoreActions, Effect: "Allow", Resource: onInterpreter }]);
      const env = resources[fn.logicalId]!.Properties.Environment.Variables;
      expect(env.SANDBOX_RUNTIME).toBe("agentcore");
      expect(env.CODE_INTERPRETER_ID).toEqual({ "Fn::GetAtt": [interpreterId, "CodeInterpreterId"] });
    }
  });

  it("where the region has no AgentCore, run_code stays on the sandbox function; asking for AgentCore there fails synth naming it", () => {
    const elsewhere = synthesize({
      openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN,
      env: { account: "123456789012", region: "sa-east-1" },
    } as any);
    const found = elsewhere.template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
    expect(Object.values(found).filter((r) => r.Type === "AWS::BedrockAgentCore::CodeInterpreterCustom")).toEqual([]);
    const executeTask = functionsOf(elsewhere.stack).find((f) => f.path.endsWith("/Steps/ExecuteTask"))!;
    expect(found[executeTask.logicalId]!.Properties.Environment.Variables.SANDBOX_RUNTIME).toBe("pyodide");
    expect(() =>
      synthesize({
        openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN,
        sandboxRuntime: "agentcore",
        env: { account: "123456789012", region: "sa-east-1" },
      } as any),
    ).toThrow(/sandboxRuntime=agentcore, but AgentCore Code Interpreter is not offered in sa-east-1/);
  });
});
