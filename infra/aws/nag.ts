import { createRequire } from "node:module";
import { Aspects, type IAspect, Stack, Validations } from "aws-cdk-lib";
import { CfnPolicy } from "aws-cdk-lib/aws-iam";
import type { IConstruct } from "constructs";

// cdk-nag's own rendering of a policy resource, so the acknowledgments name exactly its findings.
const { flattenCfnReference } = createRequire(import.meta.url)("cdk-nag/lib/utils/flatten-cfn-reference.js") as {
  flattenCfnReference: (reference: unknown) => string;
};

/** The wildcard resources Stepwise's policies may hold, each with why it cannot be narrower. */
const ALLOWED_WILDCARDS: { pattern: RegExp; reason: string }[] = [
  {
    pattern: /^\*$/,
    reason:
      "Actions that take no resource: X-Ray's PutTraceSegments and PutTelemetryRecords (active tracing), and EC2's DescribeNetworkInterfaces and DescribeSubnets (Lambda attaching the sandbox to its network).",
  },
  {
    pattern: /:ec2:[a-z0-9-]+:\d+:network-interface\/\*$/,
    reason:
      "The sandbox's network interfaces, which Lambda creates at run time (their ids do not exist before): created only in the sandbox's subnets and security group, and changed or deleted only in its VPC (ec2:Vpc).",
  },
  {
    pattern: /^<[A-Za-z0-9]+\.Arn>:\*$/,
    reason: "The state machine invokes its step functions by any version or alias (what LambdaInvoke grants).",
  },
  {
    pattern: /^<[A-Za-z0-9]+StateMachine[A-Za-z0-9]+>:\*$/,
    reason:
      "ContinueRun starts a run's next execution on the state machine version its run is on: versions are published by deploys, numbered at run time.",
  },
  {
    pattern: /:execution:.*:\*$/,
    reason: "The API describes, stops and reads the history of the runs' executions, whose names (run ids) exist only once submitted.",
  },
  { pattern: /^<[A-Za-z0-9]+\.Arn>\/index\/\*$/, reason: "Queries may use the table's secondary indexes." },
  {
    pattern: /^<[A-Za-z0-9]+ToolsFiles[A-Za-z0-9]+\.Arn>\/\*$/,
    reason:
      "The files bucket's objects (GetObject and PutObject only): their keys are made of run and upload ids that exist only at run time.",
  },
];

/** Wildcard actions accepted, each scoped to one resource by its statement. */
const ALLOWED_ACTION_WILDCARDS: { pattern: RegExp; reason: string }[] = [
  {
    pattern: /^kms:(ReEncrypt|GenerateDataKey)\*$/,
    reason: "CDK's encrypt/decrypt grant on the one tool-source key: the ReEncrypt and GenerateDataKey variants of that key only.",
  },
];

/**
 * Acknowledges, with reasons, the cdk-nag AwsSolutions findings Stepwise accepts on purpose
 * (checked by test/infra/nag.test.ts over the whole stack). Wildcards are acknowledged one by one,
 * only where they match ALLOWED_WILDCARDS: a new wildcard fails the test until someone explains it.
 */
export function acknowledgeNagFindings(
  scope: IConstruct,
  parts: {
    stateMachine: IConstruct;
    httpApi: IConstruct;
    deadLetterQueues: IConstruct[];
    accessLogBuckets: IConstruct[];
  },
): void {
  const all = Validations.of(scope);
  all.acknowledge({
    id: "AwsSolutions-L1",
    reason: "Node.js 22 is the runtime the code is built and tested for (Node 20 locally); moving to a newer one is a deliberate upgrade.",
  });
  all.acknowledge({
    id: "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
    reason: "AWS's managed policy for writing a function's own logs; it grants nothing else.",
  });
  Validations.of(parts.stateMachine).acknowledge({
    id: "AwsSolutions-SF1",
    reason: "ERROR level on purpose: the history has every state; logging ALL would copy each transition to CloudWatch at a cost per run.",
  });
  Validations.of(parts.httpApi).acknowledge({
    id: "AwsSolutions-APIG4",
    reason: "Every route checks a Bearer API key (hashed in the table) in the handler; API Gateway authorizers cannot read our keys.",
  });
  for (const queue of parts.deadLetterQueues)
    Validations.of(queue).acknowledge({
      id: "AwsSolutions-SQS3",
      reason: "This is a dead-letter queue: nothing is consumed from it automatically; an alarm watches it.",
    });
  for (const bucket of parts.accessLogBuckets)
    Validations.of(bucket).acknowledge({
      id: "AwsSolutions-S1",
      reason:
        "This bucket receives the files bucket's server access logs; logging its own access would need yet another bucket, without end.",
    });
  Aspects.of(scope).add(new AcknowledgeAllowedWildcards());
}

class AcknowledgeAllowedWildcards implements IAspect {
  visit(node: IConstruct): void {
    if (!(node instanceof CfnPolicy)) return;
    const document = Stack.of(node).resolve(node.policyDocument) as { Statement?: { Effect: string; Resource: unknown }[] };
    for (const statement of document.Statement ?? []) {
      if (statement.Effect !== "Allow") continue;
      for (const action of [(statement as { Action?: unknown }).Action]
        .flat()
        .filter((a): a is string => typeof a === "string" && a.includes("*"))) {
        const allowed = ALLOWED_ACTION_WILDCARDS.find((w) => w.pattern.test(action));
        if (allowed) Validations.of(node).acknowledge({ id: `AwsSolutions-IAM5[Action::${action}]`, reason: allowed.reason });
      }
      for (const resource of [statement.Resource]
        .flat()
        .map(flattenCfnReference)
        .filter((r) => r.includes("*"))) {
        const allowed = ALLOWED_WILDCARDS.find((w) => w.pattern.test(resource));
        if (allowed) Validations.of(node).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resource}]`, reason: allowed.reason });
      }
    }
  }
}
