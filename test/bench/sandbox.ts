/**
 * The code interpreter's start-up: the sandbox function's handler (what Lambda runs) timed cold —
 * a new container, Pyodide loaded for the call — and warm, when the container's spare interpreter
 * is already loaded (a spare process, started before the call). Prints figures; asserts nothing.
 */
import { handler } from "../../functions/sandbox/handler.js";
import { prewarm, stopSpare } from "../../shared/sandbox/runPython.js";

const WARM_RUNS = Number(process.env.BENCH_SANDBOX_RUNS ?? 5);
const CODE =
  "import csv, io, statistics\nrows = list(csv.reader(io.StringIO('a\\n1\\n2\\n3\\n')))[1:]\nstatistics.mean(float(r[0]) for r in rows)";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchSandbox(): Promise<void> {
  console.log(`\n# Code interpreter start-up (Pyodide in a fresh sandbox process per call; ${WARM_RUNS} warm calls)`);
  try {
    const began = performance.now();
    const cold = await handler({ code: CODE, memoryMb: 512 });
    const coldTotal = performance.now() - began;
    const warm: { start: number; run: number; total: number }[] = [];
    for (let i = 0; i < WARM_RUNS; i++) {
      await prewarm(512); // a warm container: the spare interpreter is loaded before the call comes
      const t = performance.now();
      const result = await handler({ code: CODE, memoryMb: 512 });
      warm.push({ start: result.startMs, run: result.runMs, total: performance.now() - t });
      if (result.value !== "2.0") throw new Error(`unexpected result ${JSON.stringify(result)}`);
    }
    console.log(
      `cold: ${coldTotal.toFixed(0)} ms per call (interpreter start ${cold.startMs.toFixed(0)} ms, code ${cold.runMs.toFixed(0)} ms)`,
    );
    console.log(
      `warm: median ${median(warm.map((w) => w.total)).toFixed(0)} ms per call (interpreter start ${median(warm.map((w) => w.start)).toFixed(1)} ms, code ${median(warm.map((w) => w.run)).toFixed(0)} ms), min ${Math.min(...warm.map((w) => w.total)).toFixed(0)} ms, max ${Math.max(...warm.map((w) => w.total)).toFixed(0)} ms`,
    );
  } finally {
    await stopSpare();
  }
}

if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] !== "memory") await benchSandbox();

/**
 * The local stack's memory around sandbox use: its resident set before, right after 20 run_code
 * calls through the Lambda endpoint (as an executor makes them), and once it has settled.
 */
export async function benchSandboxMemory(calls = 20): Promise<void> {
  const { startStack } = await import("../support/localStack.js");
  const { InvokeCommand, LambdaClient } = await import("@aws-sdk/client-lambda");
  const { readFileSync } = await import("node:fs");
  const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
  const stack = await startStack();
  try {
    const endpoints = stack.endpoints!;
    const lambda = new LambdaClient({ endpoint: endpoints.lambda, region: endpoints.region, credentials: endpoints.credentials });
    const before = rssMb(stack.pid);
    for (let i = 0; i < calls; i++) {
      const response = await lambda.send(
        new InvokeCommand({ FunctionName: "stepwise-sandbox", Payload: Buffer.from(JSON.stringify({ code: CODE, memoryMb: 512 })) }),
      );
      if (response.FunctionError) throw new Error(Buffer.from(response.Payload!).toString());
    }
    const after = rssMb(stack.pid);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    console.log(`\n# The stack's memory around ${calls} sandbox calls (RSS of the stack's process)`);
    console.log(`before: ${before.toFixed(0)} MiB, right after: ${after.toFixed(0)} MiB, 5 s later: ${rssMb(stack.pid).toFixed(0)} MiB`);
    lambda.destroy();
  } finally {
    await stack.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] === "memory") await benchSandboxMemory();

/**
 * The local code interpreter (CPython with the data libraries in bubblewrap, behind the emulated
 * AgentCore endpoint, through the same client code as on AWS): a cold call (a new session: its
 * sandbox starts, then the code runs), warm calls (the task's session is there), and the first
 * `import pandas` and `import matplotlib.pyplot` of a session. Prints figures; asserts nothing.
 */
export async function benchCodeInterpreter(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  const { cpythonMissing } = await import("../../infra/local/codeInterpreter/pythonSession.js");
  const missing = cpythonMissing();
  console.log(
    `\n# Code interpreter (CPython in bubblewrap behind the local AgentCore endpoint; a session per task; ${WARM_RUNS} warm calls)`,
  );
  if (missing) {
    console.log(`not measured: ${missing}`);
    return;
  }
  const { BedrockAgentCoreClient } = await import("@aws-sdk/client-bedrock-agentcore");
  const { LOCAL_CODE_INTERPRETER_ID, LocalCodeInterpreter } = await import("../../infra/local/codeInterpreter/endpoint.js");
  const { AgentCoreInterpreter } = await import("../../shared/sandbox/agentCoreInterpreter.js");
  const credentials = { accessKeyId: "bench", secretAccessKey: "bench-secret" };
  const interpreter = new LocalCodeInterpreter({ credentials });
  const client = new BedrockAgentCoreClient({ endpoint: await interpreter.listen(), region: "us-east-1", credentials });
  const sandbox = new AgentCoreInterpreter(client, LOCAL_CODE_INTERPRETER_ID, { sessionSeconds: 600 });
  const timed = async (code: string, session: string) => {
    const began = performance.now();
    const result = await sandbox.run({ code, session, timeoutMs: 120_000 });
    if (result.error) throw new Error(result.error);
    return { total: performance.now() - began, code: result.runMs };
  };
  try {
    const cold = await timed(CODE, "bench/cold");
    const warm: { total: number; code: number }[] = [];
    for (let i = 0; i < WARM_RUNS; i++) warm.push(await timed(CODE, "bench/cold"));
    const pandas = await timed("import pandas", "bench/pandas");
    const pandasAgain = await timed("import pandas", "bench/pandas2");
    const pyplot = await timed("import matplotlib.pyplot", "bench/pandas");
    console.log(`cold: ${cold.total.toFixed(0)} ms per call (a new session, then the code: ${cold.code.toFixed(0)} ms)`);
    console.log(
      `warm: median ${median(warm.map((w) => w.total)).toFixed(0)} ms per call (code ${median(warm.map((w) => w.code)).toFixed(0)} ms), min ${Math.min(...warm.map((w) => w.total)).toFixed(0)} ms, max ${Math.max(...warm.map((w) => w.total)).toFixed(0)} ms`,
    );
    console.log(
      `import pandas: ${pandas.code.toFixed(0)} ms in a new session (${pandasAgain.code.toFixed(0)} ms in a second one); then import matplotlib.pyplot: ${pyplot.code.toFixed(0)} ms`,
    );
    for (const key of ["bench/cold", "bench/pandas", "bench/pandas2"]) await sandbox.end(key);
  } finally {
    client.destroy();
    await interpreter.close();
  }
}
