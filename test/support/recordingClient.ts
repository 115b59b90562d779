import { type Answer, Client } from "./client.js";

/** What a client was answered: the request (or stream) and its body. */
export interface Seen {
  what: string;
  body: unknown;
}

/**
 * The test client that keeps every answer and stream it saw in `seen` (the list the clients of one
 * test file share), so the file can check that nothing a client was shown holds a secret.
 */
export class RecordingClient extends Client {
  constructor(
    url: string,
    apiKey: string,
    readonly seen: Seen[],
  ) {
    super(url, apiKey);
  }

  override async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer<T>> {
    const res = await super.request<T>(method, path, body, headers);
    this.seen.push({ what: `${method} ${path} → ${res.status}`, body: res.body });
    return res;
  }

  /** The whole SSE stream of an ended run (or the first `stopAfter` frames of a live one), recorded. */
  async recordStream(runId: string, stopAfter?: number) {
    const stream = await this.stream(runId, stopAfter ? { stopAfter } : {});
    this.seen.push({ what: `stream ${runId}`, body: { frames: stream.frames, comments: stream.comments, body: stream.body } });
    return stream;
  }
}
