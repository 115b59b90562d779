/**
 * How long one stream connection should last (STREAM_MAX_SECONDS). A streamed Lambda is not told
 * when its client leaves (the response stream is a request to Lambda's runtime API, which stays
 * open), so a stream whose client left goes on polling, held, to the end of its window; a client
 * that stays reconnects once per window with Last-Event-ID. This measures, on the local stack, what
 * a reconnection costs (the resumed stream's first byte, events delivered once each across every
 * window), then prints both sides for a few windows. Figures only; nothing asserts a duration.
 */
import { Client } from "../support/client.js";
import { startStack } from "../support/localStack.js";

const WINDOW_SECONDS = 2;
/** What the stream's SSE `retry:` asks clients to wait before reconnecting (shared/protocols/sse.ts). */
const RETRY_MS = 1_000;
/** STREAM_POLL_MS's default, and the stream function's memory (infra/aws/stepwiseFunction.ts). */
const POLL_MS = 250;
const MEMORY_GB = 0.5;
/** Lambda's price per GB-second (x86, us-east-1) and DynamoDB on-demand's per million read units. */
const USD_PER_GB_SECOND = 0.0000166667;
const USD_PER_MILLION_READS = 0.125;

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

export async function benchStreamWindow(): Promise<void> {
  console.log(
    `\n# Stream windows: a run watched through ${WINDOW_SECONDS}-second connections on the local stack, then the trade-off per window`,
  );
  const stack = await startStack({ STREAM_MAX_SECONDS: String(WINDOW_SECONDS), OFFLINE_MODEL_LATENCY_MS: "1500" });
  try {
    const client = new Client(stack.url, stack.apiKey);
    const { runId } = await client.submit({ input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve" });
    const firstBytes: number[] = [];
    const seqs: number[] = [];
    let lastEventId = "";
    let ended = false;
    while (!ended) {
      const asked = performance.now();
      const res = await fetch(`${stack.url}/v1/runs/${runId}/stream`, {
        headers: {
          authorization: `Bearer ${stack.apiKey}`,
          accept: "text/event-stream",
          ...(lastEventId ? { "last-event-id": lastEventId } : {}),
        },
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      for (let first = true; ; first = false) {
        const { done, value } = await reader.read();
        if (first) firstBytes.push(performance.now() - asked);
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      for (const block of text.split("\n\n")) {
        const id = /^id: (\d+)$/m.exec(block)?.[1];
        if (!id) continue;
        seqs.push(Number(id));
        lastEventId = id;
        if (/^event: run\.(succeeded|failed|cancelled|timed_out|interrupted)$/m.test(block)) ended = true;
      }
    }
    const whole = seqs.every((seq, i) => seq === i + 1);
    const resumed = firstBytes.slice(1);
    console.log(
      `${firstBytes.length} connections for ${seqs.length} events, ${whole ? "each event once, in order" : "EVENTS LOST OR REPEATED"}; ` +
        `a resumed stream's first byte: median ${quantile(resumed, 0.5).toFixed(0)} ms, p90 ${quantile(resumed, 0.9).toFixed(0)} ms (the client waits the ${RETRY_MS} ms retry first)`,
    );
    const pause = RETRY_MS + quantile(resumed, 0.5);
    console.log("window   reconnects per watcher-hour   watcher's pause per hour   a stream left behind: held, table reads, cost");
    for (const window of [30, 60, 120, 300]) {
      const reconnects = 3600 / window;
      const reads = (window * 1000) / POLL_MS;
      const usd = window * MEMORY_GB * USD_PER_GB_SECOND + (reads * 0.5 * USD_PER_MILLION_READS) / 1e6;
      console.log(
        `${String(window).padStart(5)} s   ${reconnects.toFixed(0).padStart(26)}   ${((reconnects * pause) / 1000).toFixed(0).padStart(22)} s   ${window} s, ${reads} reads, $${usd.toFixed(5)}`,
      );
    }
  } finally {
    await stack.stop();
  }
}
