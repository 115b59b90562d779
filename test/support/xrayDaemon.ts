import { createSocket } from "node:dgram";

/** One segment document as the daemon received it, with the header line it came under. */
export interface SegmentDocument {
  header: unknown;
  id: string;
  trace_id: string;
  name: string;
  start_time: number;
  end_time?: number;
  in_progress?: boolean;
  type?: "subsegment";
  parent_id?: string;
  namespace?: string;
  fault?: boolean;
  error?: boolean;
  cause?: { exceptions: { message: string; type: string }[] };
  annotations?: Record<string, string | number | boolean>;
  metadata?: Record<string, Record<string, unknown>>;
  subsegments?: unknown[];
}

/**
 * A real UDP listener standing in for the X-Ray daemon: it reads each datagram as the daemon's
 * protocol has it (a JSON header line, `{"format":"json","version":1}`, then one segment
 * document) and keeps the documents; a datagram that is not that is kept as a problem.
 */
export async function startXrayDaemon() {
  const socket = createSocket("udp4");
  const documents: SegmentDocument[] = [];
  const problems: string[] = [];
  socket.on("message", (message) => {
    const text = message.toString("utf8");
    const newline = text.indexOf("\n");
    try {
      if (newline < 0) throw new Error("no header line");
      const header = JSON.parse(text.slice(0, newline));
      documents.push({ header, ...JSON.parse(text.slice(newline + 1)) });
    } catch (error) {
      problems.push(`${(error as Error).message}: ${text.slice(0, 200)}`);
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const { port } = socket.address();
  return {
    address: `127.0.0.1:${port}`,
    documents,
    problems,
    /** The documents of one trace, once `count` of them have come (UDP: they may come in any order). */
    async trace(traceId: string, count: number, timeoutMs = 60_000): Promise<SegmentDocument[]> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const got = documents.filter((d) => d.trace_id === traceId);
        if (got.length >= count || Date.now() > until) return got;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
export type XrayDaemon = Awaited<ReturnType<typeof startXrayDaemon>>;
