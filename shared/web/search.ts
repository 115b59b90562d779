import { clip } from "../memory/share.js";
import type { ApiKeySource } from "../ports/apiKeySource.js";
import { type FileStore, fileText } from "../ports/files.js";
import { FixableToolError, fixableStatus, unreachable } from "../ports/tools.js";
import type { FetchLimits } from "../settings.js";
import { keywords, wordsOf } from "../text/words.js";
import { fetchPage } from "./fetchPage.js";
import { pageText, type ReadablePage } from "./readable.js";

export interface SearchHit {
  title: string;
  /** A web address, or `file:<name>` for a file of the run. */
  url: string;
  snippet: string;
}

/** Who a search runs for: the run whose files the offline provider searches. */
export interface SearchScope {
  runId: string;
  files: FileStore;
  signal?: AbortSignal;
}

/** A search engine (chosen by configuration) and how to read what it found. */
export interface SearchProvider {
  readonly name: string;
  search(query: string, limit: number, scope: SearchScope): Promise<SearchHit[]>;
  open(hit: SearchHit, scope: SearchScope): Promise<ReadablePage & { url: string }>;
}

/** A web search API: its hits are web pages, read behind the SSRF guard like web_fetch's. */
abstract class WebSearchProvider implements SearchProvider {
  abstract readonly name: string;

  constructor(protected readonly limits: FetchLimits) {}

  abstract search(query: string, limit: number, scope: SearchScope): Promise<SearchHit[]>;

  async open(hit: SearchHit, scope: SearchScope) {
    const page = await fetchPage(hit.url, this.limits, scope.signal);
    const text = await pageText(page.body, page.contentType, page.url);
    if (!text) throw new Error(`${page.url} is not a text page (${page.contentType})`);
    return { ...text, url: page.url };
  }

  /**
   * One call of the search API, answered as JSON within the fetch time limit. The operator's
   * own choice of service, by configuration: trusted, so no SSRF guard on this call.
   */
  protected async call(url: URL, init: RequestInit, scope: SearchScope): Promise<unknown> {
    const timeout = AbortSignal.timeout(this.limits.timeoutMs);
    let response: Response;
    try {
      response = await fetch(url, {
        ...init,
        headers: { accept: "application/json", ...init.headers },
        signal: scope.signal ? AbortSignal.any([scope.signal, timeout]) : timeout,
      });
    } catch (error) {
      const down = unreachable(error);
      if (down) throw new FixableToolError(`the ${this.name} search API could not be reached: ${(error as Error).message}`, down, error);
      throw error;
    }
    if (!response.ok) {
      // A refused key, a quota, the service down: a person fixes it, then the search runs again (a tool_failure pause).
      const message = `the ${this.name} search API answered ${response.status}`;
      const fixable = fixableStatus(response.status);
      throw fixable ? new FixableToolError(message, fixable) : Object.assign(new Error(message), { status: response.status });
    }
    return response.json();
  }

  /** A call made with the API key; a key the service refused (401) is read again for the next call (a secret fixed or rotated). */
  protected async withKey<T>(key: ApiKeySource, call: (value: string) => Promise<T>): Promise<T> {
    try {
      return await call(await key.read());
    } catch (error) {
      if ((error as { status?: unknown }).status === 401) key.forget();
      throw error;
    }
  }

  /** Web hits only (http and https), at most `limit`, snippets cut. */
  protected hits(results: { title?: string; url?: string; snippet?: string }[], limit: number): SearchHit[] {
    return results
      .filter((r): r is typeof r & { url: string } => typeof r.url === "string" && /^https?:/.test(r.url))
      .slice(0, limit)
      .map((r) => ({ title: r.title || r.url, url: r.url, snippet: clip(r.snippet ?? "", 300) }));
  }
}

/** Where a search API is: the address of a path under the service's base address. */
const endpoint = (base: string, path: string) => new URL(path, base.endsWith("/") ? base : `${base}/`);

/** A SearXNG instance's JSON API (`/search?format=json`). */
export class SearxngProvider extends WebSearchProvider {
  readonly name = "searxng";

  constructor(
    private readonly baseUrl: string,
    limits: FetchLimits,
  ) {
    super(limits);
  }

  async search(query: string, limit: number, scope: SearchScope): Promise<SearchHit[]> {
    const url = endpoint(this.baseUrl, "search");
    url.searchParams.set("q", query);
    url.searchParams.set("format", "json");
    const body = (await this.call(url, {}, scope)) as { results?: { title?: string; url?: string; content?: string }[] };
    return this.hits(
      (body.results ?? []).map((r) => ({ ...r, snippet: r.content })),
      limit,
    );
  }
}

/** Tavily's Search API (`POST /search`, a bearer API key; docs.tavily.com). */
export class TavilyProvider extends WebSearchProvider {
  readonly name = "tavily";

  constructor(
    private readonly apiKey: ApiKeySource,
    limits: FetchLimits,
    private readonly baseUrl = "https://api.tavily.com",
  ) {
    super(limits);
  }

  async search(query: string, limit: number, scope: SearchScope): Promise<SearchHit[]> {
    const body = (await this.withKey(this.apiKey, (key) =>
      this.call(
        endpoint(this.baseUrl, "search"),
        {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ query, max_results: limit, search_depth: "basic" }),
        },
        scope,
      ),
    )) as { results?: { title?: string; url?: string; content?: string }[] };
    return this.hits(
      (body.results ?? []).map((r) => ({ ...r, snippet: r.content })),
      limit,
    );
  }
}

/** Brave's Web Search API (`GET /res/v1/web/search`, the key in X-Subscription-Token; api-dashboard.search.brave.com). */
export class BraveProvider extends WebSearchProvider {
  readonly name = "brave";

  constructor(
    private readonly apiKey: ApiKeySource,
    limits: FetchLimits,
    private readonly baseUrl = "https://api.search.brave.com",
  ) {
    super(limits);
  }

  async search(query: string, limit: number, scope: SearchScope): Promise<SearchHit[]> {
    const url = endpoint(this.baseUrl, "res/v1/web/search");
    url.searchParams.set("q", query);
    url.searchParams.set("count", String(Math.min(limit, 20)));
    const body = (await this.withKey(this.apiKey, (key) => this.call(url, { headers: { "x-subscription-token": key } }, scope))) as {
      web?: { results?: { title?: string; url?: string; description?: string }[] };
    };
    // Brave marks the query's words in snippets with <strong>: plain text for the model.
    return this.hits(
      (body.web?.results ?? []).map((r) => ({ ...r, snippet: r.description?.replace(/<\/?strong>/g, "") })),
      limit,
    );
  }
}

/** Searches the run's own text files, offline: files ranked by how often the query's words occur. */
export class RunFilesProvider implements SearchProvider {
  readonly name = "files";

  async search(query: string, limit: number, scope: SearchScope): Promise<SearchHit[]> {
    const terms = new Set(keywords(query));
    const metas = (await scope.files.list(scope.runId)).filter(
      (f) => /^(text\/|application\/json)/.test(f.contentType) && f.bytes <= 2_000_000,
    );
    const scored = await Promise.all(
      metas.map(async (meta) => {
        const file = await scope.files.get(scope.runId, meta.name);
        const text = file ? fileText(file) : ""; // deleted since it was listed
        const found = wordsOf(text).filter((word) => terms.has(word.text));
        const named = new Set(wordsOf(meta.name).map((word) => word.text));
        const score = found.length + [...terms].filter((term) => named.has(term)).length * 5;
        const at = Math.max(0, (found[0]?.index ?? 0) - 80);
        return {
          score,
          hit: {
            title: meta.name,
            url: `file:${meta.name}`,
            snippet: text
              .slice(at, at + 300)
              .replace(/\s+/g, " ")
              .trim(),
          },
        };
      }),
    );
    return scored
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || a.hit.title.localeCompare(b.hit.title))
      .slice(0, limit)
      .map((s) => s.hit);
  }

  async open(hit: SearchHit, scope: SearchScope) {
    const name = hit.url.replace(/^file:/, "");
    const file = await scope.files.get(scope.runId, name);
    if (!file) throw new Error(`no file named ${name}`);
    return { title: name, markdown: fileText(file), url: hit.url };
  }
}
