import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AssetHashType, DockerImage, type Duration, type ILocalBundling } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { Architecture, Code, type FunctionProps, Function as LambdaFunction, Runtime, Tracing } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { type BuildOptions, buildSync } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Defaults every Stepwise Lambda shares: Node 22 on arm64, ESM bundles, X-Ray active tracing, the
 * table's name, Powertools' service and metrics namespace. 512 MB: the functions mostly wait on the
 * model; the whole local stack (every handler plus CDK synthesis, the database and the model in one
 * process) peaks at about 530 MB, one function holds far less (docs/operating.md, "Operating").
 */
function lambdaProps(scope: Construct, id: string, table: ITable, environment: Record<string, string>) {
  return {
    logGroup: new LogGroup(scope, `${id}Logs`, { retention: RetentionDays.ONE_MONTH }),
    handler: "index.handler",
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
  } satisfies Partial<FunctionProps>;
}

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

/** Modules every function leaves out of its bundle: the work products' and the policy engine's (their own layers: policyEngineLayer.ts). */
export const LAYER_MODULES = [...WORK_PRODUCT_LIBRARIES, "@cedar-policy/cedar-wasm"];

/** Some dependencies still call require(); every ES module of a bundle gets one (names no bundled module uses). */
export const REQUIRE_BANNER =
  "import { createRequire as __stepwiseCreateRequire } from 'node:module'; const require = __stepwiseCreateRequire(import.meta.url);";

/** What one function's bundle leaves out, and what ships beside its code. */
export interface StepwiseBundling {
  /** Modules found at run time instead (a layer's, or copied beside the code by afterBundling). Default LAYER_MODULES. */
  readonly externalModules?: string[];
  /**
   * Modules the handler loads with `await import()`, each bundled whole in a file of its own beside
   * the code (node_modules/<package>). For a lazy module that shares a dependency with what the
   * handler imports: esbuild puts modules shared by the entry and a lazy chunk in a chunk the entry
   * loads at once, so all of the shared dependency the lazy module reaches would be read at every
   * cold start. Bundled apart, the lazy module carries its own copy, read only when first imported.
   */
  readonly bundledApart?: string[];
  /** Runs once the bundle is in outputDir, to add files beside it (the console, Pyodide). */
  readonly afterBundling?: (outputDir: string) => void;
}

/** What every bundle is built with (EsbuildBundling says why). */
const ESBUILD_OPTIONS: BuildOptions = {
  absWorkingDir: root,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node22",
  mainFields: ["module", "main"],
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: false,
  banner: { js: REQUIRE_BANNER },
  logLevel: "warning",
};

/**
 * How every function is bundled: ES modules holding only what its handler imports, the AWS SDK
 * included (the version the tests ran; bundled code loads faster than the runtime's SDK spread
 * over hundreds of files). Split into chunks: what a handler imports with `await import()` (the
 * MCP and A2A servers, the tool clients, the SDK's credential providers...) is its own file, read
 * and compiled only when a request first needs it, so a cold start loads the entry and the chunks
 * it imports statically (`npm run bench -- bundles`). CDK's NodejsFunction cannot split (it gives
 * esbuild one output file), hence esbuild's API here. Whitespace and syntax are minified, names are
 * not: a stack trace in the logs names the real functions without a source map. No map ships and
 * none is loaded (--enable-source-maps made a container's first failure take ten times as long).
 * The files end in .mjs, so Lambda's Node loads them as ES modules without a package.json.
 */
export class EsbuildBundling implements ILocalBundling {
  /** Fields, not closures: CDK caches a bundle by its options' JSON, so two entries must differ in it. */
  readonly entry: string;
  readonly externalModules: string[];
  readonly bundledApart: string[];
  private readonly afterBundling?: (outputDir: string) => void;

  constructor(entry: string, options: StepwiseBundling = {}) {
    this.entry = entry;
    this.externalModules = options.externalModules ?? LAYER_MODULES;
    this.bundledApart = options.bundledApart ?? [];
    this.afterBundling = options.afterBundling;
  }

  tryBundle(outputDir: string): boolean {
    buildSync({
      ...ESBUILD_OPTIONS,
      entryPoints: { index: path.join(root, this.entry) },
      splitting: true,
      external: [...this.externalModules, ...this.bundledApart],
      outdir: outputDir,
      outExtension: { ".js": ".mjs" },
      // Beside the entry: code that finds a file by its own URL (runPython.ts) finds it in any chunk.
      chunkNames: "[name]-[hash]",
    });
    bundleApart(this.bundledApart, this.externalModules, outputDir);
    this.afterBundling?.(outputDir);
    return true;
  }
}

/**
 * Modules bundled whole where Node's resolution of their names finds them in the function's code:
 * node_modules/<package>/<subpath>.mjs, each exported under its subpath by its package's package.json.
 */
function bundleApart(specifiers: string[], externalModules: string[], outputDir: string): void {
  const packages = new Map<string, Record<string, string>>(); // package name → its exports
  for (const specifier of specifiers) {
    const [, packageName = specifier, rest] = /^(@[^/]+\/[^/]+|[^/]+)\/?(.*)$/.exec(specifier) ?? [];
    const file = rest ? `./${rest}.mjs` : "./index.mjs";
    buildSync({
      ...ESBUILD_OPTIONS,
      entryPoints: [specifier],
      external: externalModules,
      outfile: path.join(outputDir, "node_modules", packageName, file),
    });
    packages.set(packageName, { ...packages.get(packageName), [rest ? `./${rest}` : "."]: file });
  }
  for (const [name, exports] of packages)
    writeFileSync(path.join(outputDir, "node_modules", name, "package.json"), JSON.stringify({ name, type: "module", exports }));
}

export interface StepwiseFunctionProps {
  /** The handler module, relative to the project root (e.g. "functions/api/handler.ts"). */
  readonly entry: string;
  readonly table: ITable;
  readonly environment?: Record<string, string>;
  readonly timeout: Duration;
  /** What the bundle leaves out and adds (default: the layers' modules out, nothing added). */
  readonly bundling?: StepwiseBundling;
  /** Anything else a Lambda Function takes (memory, reserved concurrency, layers…), over the defaults. */
  readonly overrides?: Partial<Omit<FunctionProps, "code" | "handler" | "runtime">>;
}

/**
 * Every Lambda of Stepwise. It keeps its entry file, so the IAM-coverage test can read the code the
 * function runs and check each AWS call it can make against the function's role.
 */
export class StepwiseFunction extends LambdaFunction {
  /** The handler module, relative to the project root. */
  readonly entryFile: string;

  constructor(scope: Construct, id: string, props: StepwiseFunctionProps) {
    super(scope, id, {
      ...lambdaProps(scope, id, props.table, props.environment ?? {}),
      // Named by the bundle it builds (as NodejsFunction's assets are); esbuild runs on the
      // machine that synthesizes, the image only satisfies CDK's type (local bundling never declines).
      code: Code.fromAsset(root, {
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          image: DockerImage.fromRegistry("public.ecr.aws/docker/library/node:22"),
          local: new EsbuildBundling(props.entry, props.bundling),
        },
      }),
      timeout: props.timeout,
      ...props.overrides,
    });
    this.entryFile = props.entry;
  }
}
