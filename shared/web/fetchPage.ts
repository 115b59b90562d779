import { StepwiseError } from "../errors.js";
import { requestFor } from "../net/httpRequest.js";
import { assertDeliverableUrl, pinnedLookup } from "../net/ssrfGuard.js";
import type { FetchLimits } from "../settings.js";

export interface FetchedPage {
  /** Where the content came from, after redirects: the address to cite. */
  url: string;
  contentType: string;
  body: string;
}

/** Why a page could not be fetched, in words the model can act on. */
export class FetchError extends StepwiseError {
  constructor(message: string) {
    super(message, { statusCode: 400, code: "fetch_failed" });
  }
}

/**
 * GET a page from the public internet: every hop's address vetted by the webhooks' SSRF guard and
 * the connection pinned to the vetted addresses, redirects followed by hand up to the limit, the
 * body read up to the size limit, the whole exchange bounded in time.
 */
export async function fetchPage(url: string, limits: FetchLimits, signal?: AbortSignal): Promise<FetchedPage> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
  let current = url;
  for (let hop = 0; ; hop++) {
    const addresses = await assertDeliverableUrl(current, { allowLoopback: limits.allowLoopback, allowHttp: limits.allowHttp }).catch(
      (error): never => {
        throw new FetchError(`refused ${current}: ${(error as Error).message.replace(/webhook /gi, "")}`);
      },
    );
    const reply = await get(new URL(current), addresses, stop, limits).catch((error) => {
      if (deadline.aborted) throw new FetchError(`${current} did not answer within ${limits.timeoutMs / 1000} s`);
      throw error instanceof FetchError ? error : new FetchError(`${current} could not be fetched: ${(error as Error).message}`);
    });
    if (reply.status >= 300 && reply.status < 400 && reply.location) {
      if (hop >= limits.maxRedirects) throw new FetchError(`${url} redirects more than ${limits.maxRedirects} times`);
      current = new URL(reply.location, current).href;
      continue;
    }
    if (reply.status >= 400) throw new FetchError(`${current} answered ${reply.status}`);
    return { url: current, contentType: reply.contentType, body: reply.body };
  }
}

interface Reply {
  status: number;
  location?: string;
  contentType: string;
  body: string;
}

function get(
  url: URL,
  addresses: Awaited<ReturnType<typeof assertDeliverableUrl>>,
  signal: AbortSignal,
  limits: FetchLimits,
): Promise<Reply> {
  const request = requestFor(url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "GET",
        headers: {
          accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
          "user-agent": "Stepwise-web_fetch/0.1",
          "accept-encoding": "identity",
        },
        signal,
        agent: false,
        lookup: pinnedLookup(addresses),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const contentType = String(res.headers["content-type"] ?? "");
        if (status >= 300 && status < 400) {
          res.resume();
          return resolve({ status, location: res.headers.location, contentType, body: "" });
        }
        const declared = Number(res.headers["content-length"]);
        const tooBig = () => new FetchError(`${url.href} is over ${limits.maxBytes} bytes, the page size limit`);
        if (declared > limits.maxBytes) {
          res.destroy();
          return reject(tooBig());
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > limits.maxBytes) {
            res.destroy();
            return reject(tooBig());
          }
          chunks.push(chunk);
        });
        res.on("end", () => resolve({ status, contentType, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}
