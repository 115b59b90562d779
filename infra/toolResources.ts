import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { Grant, type IGrantable } from "aws-cdk-lib/aws-iam";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { SANDBOX_HANDLER } from "./handlers.js";
import { StepwiseFunction } from "./stepwiseFunction.js";
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods } from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";

export interface ToolResourcesProps {
  /** Days a run's files are kept: the same retention as the run's items in the table. */
  readonly retentionDays: number;
  /** Only named in the functions' settings: the sandbox gets no grant on it. */
  readonly table: ITable;
  /** The deployment's settings (infra/config.ts), for the sandbox as for every function. */
  readonly environment?: Record<string, string>;
}

/** What the agents' tools need beyond the table: the files bucket and the code sandbox. */
export class ToolResources extends Construct {
  readonly bucket: Bucket;
  /** The files bucket's server access logs (kept 90 days). */
  readonly accessLogs: Bucket;
  /** Runs Python for run_code. Its role may only write its logs: no table, no bucket, nothing else. */
  readonly sandbox: StepwiseFunction;
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
      cors: [{ allowedMethods: [HttpMethods.GET, HttpMethods.PUT], allowedOrigins: ["*"], allowedHeaders: ["*"], maxAge: 3600 }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.sandbox = new StepwiseFunction(this, "Sandbox", {
      entry: SANDBOX_HANDLER,
      table: props.table,
      environment: props.environment,
      timeout: Duration.seconds(90),
      overrides: {
        description: "Stepwise code sandbox: Python on Pyodide; its role may only write its logs",
        // Room for the interpreter's memory limit, its spare warm interpreter and Node itself.
        memorySize: 2048,
        bundling: {
          format: OutputFormat.ESM,
          target: "node22",
          banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
          // Pyodide loads its WebAssembly and standard library from its package folder, and the
          // interpreter runs in a worker script: both ship beside the bundle, unbundled.
          externalModules: ["pyodide"],
          commandHooks: {
            beforeBundling: () => [],
            beforeInstall: () => [],
            afterBundling: (inputDir: string, outputDir: string) => [
              `cp "${inputDir}/shared/sandbox/pythonWorker.mjs" "${outputDir}/pythonWorker.mjs"`,
              `mkdir -p "${outputDir}/node_modules" && cp -r "${inputDir}/node_modules/pyodide" "${outputDir}/node_modules/pyodide"`,
            ],
          },
        },
      },
    });

    this.environment = {
      FILES_BUCKET: this.bucket.bucketName,
      RETENTION_DAYS: String(props.retentionDays),
      SANDBOX_FUNCTION_NAME: this.sandbox.functionName,
    };
  }

  /** run_code: invoke the sandbox synchronously. */
  grantSandbox(grantee: IGrantable): void {
    this.sandbox.grantInvoke(grantee);
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
