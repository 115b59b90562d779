import { fileText, type FileStore } from "../ports/files.js";
import { fetchPage, type FetchLimits } from "./fetchPage.js";
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

/** A SearXNG instance's JSON API (`/search?format=json`); its pages are fetched behind the SSRF guard. */
export class SearxngProvider implements SearchProvider {
  readonly name = "searxng";

  constructor(
    private readonly baseUrl: string,
    private readonly limits: FetchLimits,
  ) {}

  async search(query: string, limit: number, scope: SearchScope): Promise<SearchHit[]> {
    const url = new URL("search", this.baseUrl.endsWith("/") ? this.baseUrl : `${this.baseUrl}/`);
    url.searchParams.set("q", query);
    url.searchParams.set("format", "json");
    // The operator's own instance: trusted by configuration, so no SSRF guard on this call.
    const response = await fetch(url, { headers: { accept: "application/json" }, signal: scope.signal ? AbortSignal.any([scope.signal, AbortSignal.timeout(this.limits.timeoutMs)]) : AbortSignal.timeout(this.limits.timeoutMs) });
    if (!response.ok) throw new Error(`the search engine answered ${response.status}`);
    const body = (await response.json()) as { results?: { title?: string; url?: string; content?: string }[] };
    return (body.results ?? [])
      .filter((r) => typeof r.url === "string" && /^https?:/.test(r.url))
      .slice(0, limit)
      .map((r) => ({ title: r.title ?? r.url!, url: r.url!, snippet: (r.content ?? "").slice(0, 300) }));
  }

  async open(hit: SearchHit, scope: SearchScope) {
    const page = await fetchPage(hit.url, this.limits, scope.signal);
    const text = pageText(page.body, page.contentType, page.url);
    if (!text) throw new Error(`${page.url} is not a text page (${page.contentType})`);
    return { ...text, url: page.url };
  }
}

/** Searches the run's own text files, offline: files ranked by how often the query's words occur. */
export class RunFilesProvider implements SearchProvider {
  readonly name = "files";

  async search(query: string, limit: number, scope: SearchScope): Promise<SearchHit[]> {
    const words = keywords(query);
    const metas = (await scope.files.list(scope.runId)).filter((f) => /^(text\/|application\/json)/.test(f.contentType) && f.bytes <= 2_000_000);
    const scored = await Promise.all(
      metas.map(async (meta) => {
        const text = fileText((await scope.files.get(scope.runId, meta.name))!);
        const lower = text.toLowerCase();
        const score = words.reduce((sum, word) => sum + occurrences(lower, word), 0) + words.filter((w) => meta.name.toLowerCase().includes(w)).length * 5;
        const at = Math.max(0, Math.min(...words.map((w) => lower.indexOf(w)).filter((i) => i >= 0), lower.length) - 80);
        return { score, hit: { title: meta.name, url: `file:${meta.name}`, snippet: text.slice(at, at + 300).replace(/\s+/g, " ").trim() } };
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

const STOP_WORDS = new Set("a an and are as at be by for from how in is it of on or the to what when where which who why with does do did this that these those about into than then".split(" "));

/** The words of a query worth matching: lowercase, no stop words, no duplicates. */
export function keywords(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [])].filter((w) => !STOP_WORDS.has(w));
}

function occurrences(text: string, word: string): number {
  let count = 0;
  for (let i = text.indexOf(word); i >= 0; i = text.indexOf(word, i + word.length)) count++;
  return count;
}
