import { Duration } from "aws-cdk-lib";
import { createRequire } from "node:module";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { Construct } from "constructs";
import type { LayerVersion } from "aws-cdk-lib/aws-lambda";
import { AGENT_STEPS, STEP_HANDLERS, type StepName } from "./handlers.js";
import { BUNDLING, StepwiseFunction, WORK_PRODUCT_LIBRARIES } from "./stepwiseFunction.js";
import { tokenizerLayer } from "./tokenizerLayer.js";

export { lambdaProps } from "./stepwiseFunction.js";

export interface AgentFunctionsProps {
  readonly table: ITable;
  readonly environment: Record<string, string>;
}

const require = createRequire(import.meta.url);
const RESVG_VERSION = (require("@resvg/resvg-js/package.json") as { version: string }).version;
const CHART_FONT = require.resolve("@expo-google-fonts/inter/400Regular/Inter_400Regular.ttf");

/** The pure-JavaScript work-product libraries, each prebuilt to one minified file an agent function loads when a tool first needs it. */
const PREBUILT = WORK_PRODUCT_LIBRARIES.filter((name) => name !== "@resvg/resvg-js");

/**
 * How the agents' functions are bundled: the handler's file holds none of the work-product
 * libraries (V8 would compile them at every cold start); each ships beside it as a package of one
 * prebuilt, minified ES module, loaded on first use. The PNG renderer ships as its package with its
 * Linux arm64 binary (npm installs only the build machine's), and the charts' font beside the bundle.
 */
const AGENT_BUNDLING = {
  ...BUNDLING,
  commandHooks: {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir: string, outputDir: string) => [
      `cp "${CHART_FONT}" "${outputDir}/Inter_400Regular.ttf"`,
      `npm install --prefix "${outputDir}" --no-save --no-package-lock --no-audit --no-fund --os=linux --cpu=arm64 --libc=glibc @resvg/resvg-js@${RESVG_VERSION}`,
      ...PREBUILT.flatMap((name, i) => {
        const dir = `${outputDir}/node_modules/${name}`;
        // The entry sits in the project, so it resolves the real package (not the one being made).
        const entry = `${inputDir}/node_modules/.cache/stepwise-prebuilt-${i}.mjs`;
        return [
          `mkdir -p "${dir}" "${inputDir}/node_modules/.cache"`,
          // Re-exports the package as an ES module: its named exports, and a CommonJS package's default.
          `echo 'export * from "${name}"; import * as all from "${name}"; export default all.default ?? all;' > "${entry}"`,
          `"${inputDir}/node_modules/.bin/esbuild" "${entry}" --bundle --platform=node --format=esm --target=node22 --minify --log-level=error --main-fields=module,main --banner:js="${BUNDLING.banner}" --outfile="${dir}/index.mjs"`,
          `echo '{"name":"${name}","type":"module","exports":"./index.mjs"}' > "${dir}/package.json"`,
          `rm "${entry}"`,
        ];
      }),
    ],
  },
};

/** One Lambda per state machine Task, each with up to 15 minutes for its agent turn. */
export class AgentFunctions extends Construct {
  readonly functions: Record<StepName, StepwiseFunction>;
  /** The token counter's rank tables, for the steps that run an agent. */
  readonly tokenizer: LayerVersion;

  constructor(scope: Construct, id: string, props: AgentFunctionsProps) {
    super(scope, id);
    this.tokenizer = tokenizerLayer(this, "Tokenizer");
    const entries = Object.entries(STEP_HANDLERS) as [StepName, string][];
    const runsAgent = new Set<StepName>(AGENT_STEPS);
    this.functions = Object.fromEntries(
      entries.map(([name, entry]) => {
        const overrides = runsAgent.has(name) ? { layers: [this.tokenizer], bundling: AGENT_BUNDLING } : { layers: [] };
        const fn = new StepwiseFunction(this, name, { entry, table: props.table, environment: props.environment, timeout: Duration.minutes(15), overrides });
        return [name, fn];
      }),
    ) as Record<StepName, StepwiseFunction>;
  }
}
