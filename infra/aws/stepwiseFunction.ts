import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Duration } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { Architecture, Runtime, Tracing } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction, type NodejsFunctionProps, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Defaults every Stepwise Lambda shares: Node 22 on arm64, ESM bundles, X-Ray active tracing, the
 * table's name, Powertools' service and metrics namespace. 512 MB: the functions mostly wait on the
 * model; the whole local stack (every handler plus CDK synthesis, the database and the model in one
 * process) peaks at about 530 MB, one function holds far less (docs/operating.md, "Operating").
 */
function lambdaProps(scope: Construct, id: string, entry: string, table: ITable, environment: Record<string, string>): NodejsFunctionProps {
  return {
    logGroup: new LogGroup(scope, `${id}Logs`, { retention: RetentionDays.ONE_MONTH }),
    entry: path.join(root, entry),
    handler: "handler",
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    memorySize: 512,
    tracing: Tracing.ACTIVE,
    environment: {
      TABLE_NAME: table.tableName,
      POWERTOOLS_SERVICE_NAME: "stepwise",
      POWERTOOLS_METRICS_NAMESPACE: "Stepwise",
      ...environment,
    },
    bundling: BUNDLING,
  };
}

/**
 * How every function is bundled (the API adds the console to it): one ESM file holding only what
 * its handler imports, the AWS SDK included (the version the tests ran; one file loads faster than
 * the runtime's SDK spread over hundreds). Whitespace and syntax are minified, names are not: a
 * stack trace in the logs names the real functions without a source map. No map ships and none is
 * loaded (--enable-source-maps made a container's first failure take ten times as long).
 */
/**
 * The work products' libraries (documents, charts, slides): loaded on first use by the tools, so
 * only the agent functions ship them (agentFunctions.ts); every other function leaves them out.
 */
export const WORK_PRODUCT_LIBRARIES = [
  "exceljs",
  "@e965/xlsx",
  "csv-parse",
  "mammoth",
  "unpdf",
  "vega",
  "vega-lite",
  "pptxgenjs",
  "@resvg/resvg-js",
  // web_fetch's and deep_search's HTML readers (shared/web/readable.ts).
  "linkedom",
  "@mozilla/readability",
  "turndown",
];

export const BUNDLING = {
  // The policy engine too: its own layer (policyEngineLayer.ts).
  externalModules: [...WORK_PRODUCT_LIBRARIES, "@cedar-policy/cedar-wasm"],
  format: OutputFormat.ESM,
  target: "node22",
  bundleAwsSDK: true,
  sourceMap: false,
  esbuildArgs: { "--minify-whitespace": true, "--minify-syntax": true },
  mainFields: ["module", "main"],
  // Some dependencies still call require(); give ESM bundles one (names no bundled module uses).
  banner:
    "import { createRequire as __stepwiseCreateRequire } from 'node:module'; const require = __stepwiseCreateRequire(import.meta.url);",
};

export interface StepwiseFunctionProps {
  /** The handler module, relative to the project root (e.g. "functions/api/handler.ts"). */
  readonly entry: string;
  readonly table: ITable;
  readonly environment?: Record<string, string>;
  readonly timeout: Duration;
  /** Anything else NodejsFunction takes (memory, reserved concurrency…), over the defaults. */
  readonly overrides?: Partial<NodejsFunctionProps>;
}

/**
 * Every Lambda of Stepwise. It keeps its entry file, so the IAM-coverage test can read the code the
 * function runs and check each AWS call it can make against the function's role.
 */
export class StepwiseFunction extends NodejsFunction {
  /** The handler module, relative to the project root. */
  readonly entryFile: string;

  constructor(scope: Construct, id: string, props: StepwiseFunctionProps) {
    super(scope, id, {
      ...lambdaProps(scope, id, props.entry, props.table, props.environment ?? {}),
      timeout: props.timeout,
      ...props.overrides,
    });
    this.entryFile = props.entry;
  }
}
