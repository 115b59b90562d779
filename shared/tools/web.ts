import * as z from "zod";
import { slugOf } from "../ports/files.js";
import type { FetchLimits } from "../settings.js";
import { keywords, wordsOf } from "../text/words.js";
import { fetchPage } from "../web/fetchPage.js";
import { pageText } from "../web/readable.js";
import type { SearchHit, SearchProvider } from "../web/search.js";
import { defineTool } from "./tool.js";

/** What one page may give the model (the agent's tool-output limit cuts again and keeps the whole). */
const MAX_PAGE_CHARS = 40_000;

/** web_fetch: a page's readable text as Markdown, with its address first so it can be cited. */
export function webFetchTool(limits: FetchLimits) {
  return defineTool({
    name: "web_fetch",
    description: "Fetch a web page and read its main text as Markdown. The first line is the page's address: cite it.",
    access: "read",
    parameters: z.object({ url: z.string().url().max(2_000) }),
    async run({ url }, { signal }) {
      const page = await fetchPage(url, limits, signal);
      const text = await pageText(page.body, page.contentType, page.url);
      if (!text) return `Error: ${page.url} is not a text page (${page.contentType || "no content type"}).`;
      const markdown =
        text.markdown.length > MAX_PAGE_CHARS
          ? `${text.markdown.slice(0, MAX_PAGE_CHARS)}\n[cut at ${MAX_PAGE_CHARS} characters]`
          : text.markdown;
      return `Source: ${page.url}\nTitle: ${text.title}\n\n${markdown}`;
    },
  });
}

/** web_search: results of the configured provider, numbered, with their addresses. */
export function webSearchTool(provider: SearchProvider) {
  return defineTool({
    name: "web_search",
    description:
      provider.name === "files"
        ? "Search the run's own files for a query; results are numbered with their file names."
        : "Search the web; results are numbered with title, address and a snippet.",
    access: "read",
    grants: provider.name === "files" ? ["files:read"] : [],
    parameters: z.object({ query: z.string().min(1).max(500), limit: z.number().int().min(1).max(20).default(5) }),
    async run({ query, limit }, { runId, files, signal }) {
      const hits = await provider.search(query, limit, { runId, files, signal });
      if (hits.length === 0) return `No results for "${query}".`;
      return hits.map((h, i) => `${i + 1}. ${h.title}\n   ${h.url}\n   ${h.snippet}`).join("\n");
    },
  });
}

const PAGES = 3;
const NOTES_PER_PAGE = 3;

/**
 * deep_search, as in JD Genie: several queries at once, the best pages read, and notes — the
 * paragraphs that answer most of the question — each with the number of its source. Each stage is
 * shown as it happens (search.progress), and the notes are kept as a Markdown file of the run.
 */
export function deepSearchTool(provider: SearchProvider) {
  return defineTool({
    name: "deep_search",
    description:
      "Research a question: run several searches at once, read the best pages, and return notes with numbered sources; " +
      "the notes are also saved as a Markdown file of the run (notes-<question>.md) for reports to use.",
    access: "read",
    // Its notes are a file of the run; the offline provider reads the run's files too.
    grants: provider.name === "files" ? ["files:read", "files:write"] : ["files:write"],
    parameters: z.object({
      question: z.string().min(1).max(500),
      queries: z.array(z.string().min(1).max(300)).max(5).optional().describe("Search queries to run (default: derived from the question)"),
    }),
    async run({ question, queries }, { runId, files, signal, progress, idempotencyKey }) {
      const scope = { runId, files, signal };
      const words = keywords(question);
      const asked = queries?.length ? queries : [...new Set([question, words.join(" ")].filter(Boolean))];
      progress?.({ type: "search.progress", data: { stage: "queries", count: asked.length, detail: asked.join(" | ") } });
      const settled = await Promise.allSettled(asked.map((q) => provider.search(q, 5, scope)));
      const results = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      // Every search failed: the provider's error is the tool's (an expired key pauses the task, as web_search's does).
      if (results.length === 0) throw (settled[0] as PromiseRejectedResult).reason;
      const best = rankHits(results);
      if (best.length === 0) return `No sources found for "${question}" (searched: ${asked.join(" | ")}).`;
      const pages = await Promise.all(
        best.slice(0, PAGES).map((hit) => provider.open(hit, scope).catch((error: Error) => ({ error: error.message, url: hit.url }))),
      );
      const sources: { title: string; url: string }[] = [];
      const notes: string[] = [];
      for (const page of pages) {
        if ("error" in page) continue;
        sources.push({ title: page.title, url: page.url });
        for (const paragraph of bestParagraphs(page.markdown, words)) notes.push(`- ${paragraph} [${sources.length}]`);
      }
      progress?.({
        type: "search.progress",
        data: {
          stage: "pages",
          count: sources.length,
          detail: sources.map((s) => s.url).join(" | ") || `none of ${pages.length} could be read`,
        },
      });
      if (sources.length === 0) return `Found ${best.length} results for "${question}" but none could be read.`;
      // Kept once per call (a replayed read writes nothing again): a report can name it as material.
      const name = `notes-${slugOf(question, "search")}.md`;
      const markdown = [
        `# Notes on: ${question}`,
        "",
        ...notes,
        "",
        "## Sources",
        "",
        ...sources.map((s, i) => `${i + 1}. [${s.title.replace(/[[\]]/g, "")}](${s.url})`),
        "",
      ].join("\n");
      await files.put(runId, name, markdown, { description: `Notes of deep_search: ${question}`.slice(0, 500), idempotencyKey });
      progress?.({
        type: "search.progress",
        data: { stage: "notes", count: notes.length, detail: `${notes.length} notes from ${sources.length} sources, saved as ${name}` },
      });
      return [
        `Notes on: ${question}`,
        "",
        ...notes,
        "",
        "Sources:",
        ...sources.map((s, i) => `${i + 1}. ${s.title} — ${s.url}`),
        "",
        `Saved as ${name}.`,
      ].join("\n");
    },
  });
}

/** Hits found by more queries first, then by their best rank; one per address. */
function rankHits(results: SearchHit[][]): SearchHit[] {
  const seen = new Map<string, { hit: SearchHit; count: number; rank: number }>();
  for (const hits of results) {
    hits.forEach((hit, rank) => {
      const known = seen.get(hit.url);
      if (known) Object.assign(known, { count: known.count + 1, rank: Math.min(known.rank, rank) });
      else seen.set(hit.url, { hit, count: 1, rank });
    });
  }
  return [...seen.values()].sort((a, b) => b.count - a.count || a.rank - b.rank).map((s) => s.hit);
}

/** The paragraphs with the most of the question's words, in the page's order, each cut to 400 characters. */
function bestParagraphs(markdown: string, terms: string[]): string[] {
  const paragraphs = markdown
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, " ").trim())
    .filter((p) => p.length > 20 && !p.startsWith("#"));
  const scored = paragraphs.map((text, index) => {
    const words = new Set(wordsOf(text).map((word) => word.text));
    return { text, index, score: terms.filter((term) => words.has(term)).length };
  });
  return scored
    .filter((p) => p.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, NOTES_PER_PAGE)
    .sort((a, b) => a.index - b.index)
    .map((p) => (p.text.length > 400 ? `${p.text.slice(0, 400)}…` : p.text));
}
