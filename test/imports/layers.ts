/**
 * The layers of Stepwise and what each may import (docs/architecture.md draws them). A file belongs
 * to the unit whose path matches it most closely (a file path beats its folder). An import from one
 * unit to another is allowed only if the importing unit lists it; `npm test` fails on any other
 * (test/imports/checkImports.ts). The lists form no cycle (the check says so if one would), so
 * "lower" and "higher" are well defined; the units are listed lowest first.
 */
export interface Layer {
  name: string;
  /** Folders (ending in "/") and files the unit holds. */
  paths: string[];
  /** The units it may import, besides itself. */
  imports: string[];
  /** What it is, printed with a broken rule. */
  holds: string;
  /** It may call AWS itself (the SDK, the CDK): only adapters, handlers and the products that deploy or emulate AWS do. */
  aws?: true;
}

const BASICS = ["basics"];
const CONTRACTS = [...BASICS, "model", "contracts"];
const PORTS = [...CONTRACTS, "settings", "ports"];
const LIBRARIES = [...PORTS, "libraries"];
/** The core: what a run is and does, talking to the world only through ports. */
const CORE = [...LIBRARIES, "services", "wire formats", "tools", "views", "run", "agent", "steps", "protocols"];
const ADAPTERS = ["aws adapters"];
const SERVER = [...CORE, ...ADAPTERS, "lambda kit"];

export const LAYERS: Layer[] = [
  // The core, lowest first.
  {
    name: "basics",
    paths: ["shared/errors.ts", "shared/observability.ts", "shared/lazyImport.ts", "shared/text/", "shared/net/"],
    imports: [],
    holds: "errors, logs and metrics, lazy imports, words, the Markdown dialect, the address guard",
  },
  {
    name: "model",
    paths: ["shared/llm/"],
    imports: BASICS,
    holds: "the model port and its helpers: messages, role settings, provider rules, streaming",
  },
  { name: "contracts", paths: ["shared/contracts/"], imports: [...BASICS, "model"], holds: "zod schemas and limits every layer shares" },
  { name: "settings", paths: ["shared/settings.ts"], imports: CONTRACTS, holds: "the deployment's settings, read once" },
  {
    name: "ports",
    paths: ["shared/ports/"],
    imports: [...CONTRACTS, "settings"],
    holds: "the interfaces the core talks to the world through",
  },
  {
    name: "services",
    paths: ["shared/handlerPorts.ts"],
    imports: PORTS,
    holds: "the ports a handler is given, as one type",
  },
  {
    name: "libraries",
    paths: [
      "shared/memory/",
      "shared/documents/",
      "shared/charts/",
      "shared/reports/",
      "shared/web/",
      "shared/webhooks/",
      "shared/sandbox/",
      "shared/policy/",
      "shared/guardrails/",
      "shared/budget/",
    ],
    imports: PORTS,
    holds:
      "work the core delegates: context and memory, documents, charts, reports, web pages, webhook delivery, Python, tool policies (Cedar), guardrail checks, budgets",
  },
  {
    name: "wire formats",
    paths: ["shared/protocols/a2a.ts", "shared/protocols/sse.ts"],
    imports: PORTS,
    holds: "how a run looks on a wire: SSE framing, A2A tasks and pushes",
  },
  { name: "tools", paths: ["shared/tools/"], imports: LIBRARIES, holds: "the tool interface, the registry and every built-in tool" },
  { name: "views", paths: ["shared/views/"], imports: PORTS, holds: "what a client sees of a run" },
  {
    name: "run",
    paths: ["shared/run/"],
    imports: [...LIBRARIES, "services", "views", "wire formats"],
    holds: "a run's life: submit, cancel, resume, its end, the session queue",
  },
  {
    name: "agent",
    paths: ["shared/agent/"],
    imports: [...LIBRARIES, "tools", "views", "run"],
    holds: "the agent loop, tool calls and their approval, interrupts, prompts, the router",
  },
  {
    name: "steps",
    paths: ["shared/steps/"],
    imports: [...LIBRARIES, "tools", "views", "run", "agent"],
    holds: "one module per state of the machine",
  },
  {
    name: "protocols",
    paths: ["shared/protocols/"],
    imports: [...LIBRARIES, "tools", "views", "run", "agent", "services", "wire formats", "fold"],
    holds: "the wire protocols over the same runs: SSE, MCP, A2A, AG-UI",
  },
  {
    name: "fakes",
    paths: ["shared/testing/"],
    imports: CORE,
    holds: "in-memory fakes of every port and a scripted model, for tests",
  },

  // The adapters: the ports over AWS and the model's HTTP API.
  {
    name: "aws adapters",
    paths: [
      "shared/store/",
      "shared/secrets/",
      "shared/sandbox/agentCoreInterpreter.ts",
      "shared/sandbox/lambdaSandbox.ts",
      "shared/webhooks/queue.ts",
      "shared/llm/openaiModel.ts",
      "shared/tracing/",
    ],
    imports: LIBRARIES,
    aws: true,
    holds: "DynamoDB, S3, Step Functions, SQS, KMS, Secrets Manager, Lambda, the code interpreter, the model's HTTP API, X-Ray's daemon",
  },

  { name: "manifest", paths: ["package.json"], imports: [], holds: "the package's name and version" },

  // The Lambda handlers: what every handler shares, then one unit per handler.
  {
    name: "lambda kit",
    paths: ["functions/"],
    imports: [...CORE, ...ADAPTERS, "manifest"],
    aws: true,
    holds: "what the handlers share: HTTP plumbing, the AWS clients, the ports' wiring, the MCP and A2A endpoints",
  },
  {
    name: "api handler",
    paths: ["functions/api/", "functions/console/"],
    imports: [...SERVER, "manifest"],
    aws: true,
    holds: "the HTTP API, and the console's files it serves",
  },
  {
    name: "stream handler",
    paths: ["functions/stream/"],
    imports: SERVER,
    aws: true,
    holds: "the streamed endpoints: SSE, AG-UI, MCP, A2A",
  },
  { name: "step handlers", paths: ["functions/steps/"], imports: SERVER, aws: true, holds: "one handler per state of the machine" },
  { name: "notify handler", paths: ["functions/notify/"], imports: SERVER, aws: true, holds: "execution ends in, webhooks out" },
  { name: "sandbox handler", paths: ["functions/sandbox/"], imports: SERVER, aws: true, holds: "run_code's Python" },

  // The products in infra/, each apart.
  {
    name: "cdk app",
    paths: ["infra/aws/"],
    imports: SERVER,
    aws: true,
    holds: "the CDK app: the Stepwise construct, the state machine, monitoring, deploy settings",
  },
  {
    name: "offline model",
    paths: ["infra/offlineModel/"],
    imports: ["basics", "model"],
    holds: "the offline OpenAI-compatible model; it knows only its requests",
  },
  {
    name: "fold",
    paths: ["shared/apiClient/runFold.ts"],
    imports: ["contracts"],
    holds: "one fold of a run's events into what a reader knows of it, for every reader",
  },
  {
    name: "api client",
    paths: ["shared/apiClient/"],
    imports: ["contracts", "fold"],
    holds: "the typed API client the CLI and the console share",
  },
  { name: "display", paths: ["infra/display/"], imports: ["contracts"], holds: "display code the CLI and the console share" },
  {
    name: "cli",
    paths: ["infra/cli/"],
    imports: ["basics", "contracts", "api client", "fold", "display"],
    holds: "the command-line client (its own package)",
  },
  {
    name: "console",
    paths: ["infra/console/"],
    imports: ["basics", "contracts", "api client", "fold", "display"],
    holds: "the web console",
  },
  {
    name: "evals",
    paths: ["infra/evals/"],
    imports: ["contracts", "api client", "offline model"],
    holds: "`npm run eval`: datasets run through the API client, checks, trajectories, reports (the offline model judges by default)",
  },
  {
    name: "local emulator",
    paths: ["infra/local/"],
    imports: [...SERVER, "api handler", "step handlers", "sandbox handler", "cdk app", "offline model", "console", "manifest"],
    aws: true,
    holds: "the whole stack on one machine (`npm start`)",
  },

  // Tests may import anything.
  { name: "tests", paths: ["test/", "vitest.config.ts"], imports: ["*"], holds: "the tests and their support" },
];

/**
 * Imports that break the layers and wait for a change of their own: none today. Each entry is one
 * exact import; the check fails when one no longer occurs, so an entry is deleted as its change lands.
 */
export const PENDING: { file: string; target: string; until: string }[] = [];
