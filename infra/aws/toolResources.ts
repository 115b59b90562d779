import { cpSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Aws, Duration, RemovalPolicy, Stack } from "aws-cdk-lib";
import { CfnCodeInterpreterCustom } from "aws-cdk-lib/aws-bedrockagentcore";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { FlowLogDestination, SecurityGroup, SubnetType, Vpc } from "aws-cdk-lib/aws-ec2";
import { Effect, Grant, type IGrantable, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Tracing } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods } from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";
import { SANDBOX_MEMORY } from "../../shared/contracts/sandboxMemory.js";
import { TOOL_GRANT_ACTIONS, type ToolGrant } from "../../shared/contracts/toolGrants.js";
import { SANDBOX_HANDLER } from "./handlers.js";
import { StepwiseFunction } from "./stepwiseFunction.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface ToolResourcesProps {
  /** Days a run's files are kept: the same retention as the run's items in the table. */
  readonly retentionDays: number;
  /** Only named in the functions' settings: the sandbox gets no grant on it. */
  readonly table: ITable;
  /** The deployment's settings (infra/aws/config.ts), for the sandbox as for every function. */
  readonly environment?: Record<string, string>;
  /** Executions kept for the sandbox (none by default: an account with a reduced quota cannot reserve any). */
  readonly sandboxReservedConcurrency?: number;
  /** run_code's runtime: "agentcore" adds the code interpreter the agents use (the sandbox function stays, unused). */
  readonly sandboxRuntime: "agentcore" | "pyodide";
}

/** What the agents' tools need beyond the table: the files bucket and the code sandbox. */
export class ToolResources extends Construct {
  readonly bucket: Bucket;
  /** The files bucket's server access logs (kept 90 days). */
  readonly accessLogs: Bucket;
  /**
   * Runs Python for run_code, in a network with no route out. Its role may only write its own log
   * group and let Lambda attach the function to its own subnets and security group: no table, no
   * bucket, no tracing, nothing else.
   */
  readonly sandbox: StepwiseFunction;
  /** The sandbox's network: isolated subnets, no internet or NAT gateway, no endpoints. */
  readonly sandboxVpc: Vpc;
  /**
   * AgentCore Code Interpreter (sandboxRuntime agentcore): sessions in the SANDBOX network mode (no
   * route out), with a role that grants nothing, so the code can reach no AWS API either.
   */
  readonly codeInterpreter?: CfnCodeInterpreterCustom;
  /** Settings for every function that reads or writes files. */
  readonly environment: Record<string, string>;

  constructor(scope: Construct, id: string, props: ToolResourcesProps) {
    super(scope, id);
    this.accessLogs = new Bucket(this, "FilesAccessLogs", {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      lifecycleRules: [{ id: "log-retention", expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.bucket = new Bucket(this, "Files", {
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: "files/",
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: false,
      lifecycleRules: [
        { id: "run-retention", expiration: Duration.days(props.retentionDays) },
        { id: "abandoned-uploads", abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      // Presigned uploads and downloads from the console (same API, another origin on AWS).
      cors: [
        {
          allowedMethods: [HttpMethods.GET, HttpMethods.PUT],
          allowedOrigins: ["*"],
          allowedHeaders: ["*"],
          exposedHeaders: ["ETag"],
          maxAge: 3600,
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // A tenant's code may reach JavaScript in its process: the network it finds leads nowhere (no
    // gateway, no NAT, no VPC endpoints; the security group allows no traffic out) and the process
    // has no credentials (its environment is empty), so no AWS API can be called from it.
    this.sandboxVpc = new Vpc(this, "SandboxNetwork", {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: "sandbox", subnetType: SubnetType.PRIVATE_ISOLATED }],
      restrictDefaultSecurityGroup: false,
    });
    this.sandboxVpc.addFlowLog("FlowLogs", {
      destination: FlowLogDestination.toCloudWatchLogs(
        new LogGroup(this, "SandboxNetworkFlowLogs", { retention: RetentionDays.ONE_MONTH }),
      ),
    });
    const noEgress = new SecurityGroup(this, "SandboxNoEgress", {
      vpc: this.sandboxVpc,
      allowAllOutbound: false,
      description: "Stepwise sandbox: no traffic in or out",
    });
    // Its own role in place of Lambda's two managed policies (logs to any group, network interfaces
    // anywhere): the statements are added below, once the log group and subnets exist.
    const sandboxRole = new Role(this, "SandboxRole", {
      description: "Stepwise code sandbox: writes its own logs, lets Lambda attach it to its own network; nothing else",
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
    });
    this.sandbox = new StepwiseFunction(this, "Sandbox", {
      entry: SANDBOX_HANDLER,
      table: props.table,
      environment: props.environment,
      timeout: Duration.seconds(90),
      overrides: {
        description: "Stepwise code sandbox: Python on Pyodide, a process per call, no route out; its role may only write its logs",
        role: sandboxRole,
        vpc: this.sandboxVpc,
        vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
        securityGroups: [noEgress],
        // X-Ray's daemon would need a route out; the sandbox is not traced.
        tracing: Tracing.DISABLED,
        reservedConcurrentExecutions: props.sandboxReservedConcurrency,
        // Published per deploy and kept: a run pinned to an older deploy calls that deploy's sandbox
        // (a newer one may refuse the older request's shape).
        currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN },
        // Room for the interpreter's process (its memory limit), the spare one and Node itself: the
        // parts and the largest limit a call may have are derived together (sandboxMemory.ts).
        memorySize: SANDBOX_MEMORY.functionMb,
      },
      bundling: {
        // Pyodide loads its WebAssembly and standard library (compiled at install: build:sandbox)
        // from its package folder, and the interpreter runs in a script of its own: both ship
        // beside the bundle, unbundled, in the function's read-only code.
        externalModules: ["pyodide"],
        afterBundling: (outputDir: string) => {
          cpSync(path.join(root, "shared/sandbox/pythonProcess.mjs"), path.join(outputDir, "pythonProcess.mjs"));
          cpSync(path.join(root, "node_modules/pyodide"), path.join(outputDir, "node_modules/pyodide"), {
            recursive: true,
            dereference: true,
          });
        },
      },
    });

    scopeSandboxRole(sandboxRole, this.sandbox, this.sandboxVpc, noEgress);

    this.environment = {
      FILES_BUCKET: this.bucket.bucketName,
      RETENTION_DAYS: String(props.retentionDays),
      // The version this deploy published, not the function: a step function's version (pinned by
      // the state machine's) carries this deploy's sandbox in its environment.
      SANDBOX_FUNCTION_NAME: this.sandbox.currentVersion.functionArn,
      SANDBOX_RUNTIME: props.sandboxRuntime,
    };
    if (props.sandboxRuntime === "agentcore") {
      // The interpreter's execution role: AgentCore may assume it for this account's interpreter only,
      // and it carries no permission at all: code in a session can call nothing with it.
      const role = new Role(this, "CodeInterpreterRole", {
        description: "Stepwise code interpreter: runs code, may call no AWS API",
        assumedBy: new ServicePrincipal("bedrock-agentcore.amazonaws.com", {
          conditions: { StringEquals: { "aws:SourceAccount": Aws.ACCOUNT_ID } },
        }),
      });
      this.codeInterpreter = new CfnCodeInterpreterCustom(this, "CodeInterpreter", {
        // Letters, digits and underscores, at most 48: unique per stack in the account and region.
        name: `stepwise_${Stack.of(this).node.addr.slice(0, 12)}_${this.node.addr.slice(0, 12)}`,
        description: "Stepwise run_code: Python with pandas, numpy and matplotlib; a session per task; no network",
        networkConfiguration: { networkMode: "SANDBOX" },
        executionRoleArn: role.roleArn,
      });
      this.environment.CODE_INTERPRETER_ID = this.codeInterpreter.attrCodeInterpreterId;
    }
  }

  /**
   * What the agents' tools declare they need (shared/contracts/toolGrants.ts), on this stack's
   * resources: the files bucket's objects, and the sandbox function (run_code invokes it).
   */
  grantTools(grantee: IGrantable, grants: readonly ToolGrant[]): void {
    for (const grant of grants) {
      if (grant === "sandbox:invoke") {
        // Its versions too (a run calls its deploy's), and its state: a call waits while it wakes from Inactive.
        this.sandbox.grantInvoke(grantee);
        Grant.addToPrincipal({
          grantee,
          actions: ["lambda:GetFunctionConfiguration"],
          resourceArns: [this.sandbox.functionArn, `${this.sandbox.functionArn}:*`],
        });
      } else if (grant === "interpreter:invoke") {
        if (!this.codeInterpreter) throw new Error("run_code uses the code interpreter, but sandboxRuntime is not agentcore");
        // Start, use and stop sessions of this interpreter, and of no other.
        Grant.addToPrincipal({
          grantee,
          actions: [...TOOL_GRANT_ACTIONS[grant]],
          resourceArns: [this.codeInterpreter.attrCodeInterpreterArn],
        });
      } else Grant.addToPrincipal({ grantee, actions: [...TOOL_GRANT_ACTIONS[grant]], resourceArns: [this.bucket.arnForObjects("*")] });
    }
  }

  /**
   * Put, get and copy objects (CopyObject needs read on the source and write on the target), and
   * presign downloads: only s3:GetObject and s3:PutObject on the bucket's objects. The code never
   * lists, deletes or tags objects (the lifecycle rule expires them).
   */
  grantFiles(grantee: IGrantable): void {
    Grant.addToPrincipal({ grantee, actions: ["s3:GetObject", "s3:PutObject"], resourceArns: [this.bucket.arnForObjects("*")] });
  }
}

/**
 * The sandbox role's grants, scoped to what is its own (Lambda reads them through the function's role
 * when it creates and removes the function's network interfaces). EC2's Describe calls take no
 * resource (IAM allows them only on `*`); creating an interface names the subnet and security group,
 * so listing ours confines it; the calls on an existing interface are confined by the network it is
 * in (the `ec2:Vpc` condition key of the network-interface resource).
 */
function scopeSandboxRole(role: Role, sandbox: StepwiseFunction, vpc: Vpc, group: SecurityGroup): void {
  const stack = Stack.of(role);
  const ec2Arn = (resource: string) => stack.formatArn({ service: "ec2", resource });
  sandbox.logGroup.grantWrite(role);
  role.addToPrincipalPolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ["ec2:CreateNetworkInterface"],
      resources: [
        ...vpc.isolatedSubnets.map((subnet) => ec2Arn(`subnet/${subnet.subnetId}`)),
        ec2Arn(`security-group/${group.securityGroupId}`),
        ec2Arn("network-interface/*"),
      ],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ["ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"],
      resources: [ec2Arn("network-interface/*")],
      conditions: { ArnEquals: { "ec2:Vpc": ec2Arn(`vpc/${vpc.vpcId}`) } },
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ["ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"],
      resources: ["*"],
    }),
  );
}
