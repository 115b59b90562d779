import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClients } from "../../../../functions/toolClients.js";
import { workTools } from "../../../../functions/workTools.js";
import type { ToolProgress } from "../../../../shared/contracts/events.js";
import { fileText } from "../../../../shared/ports/files.js";
import { fixedKey, SecretKey } from "../../../../shared/secrets/secretKey.js";
import { type FetchLimits, settingsFromEnv } from "../../../../shared/settings.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { deepSearchTool, webFetchTool, webSearchTool } from "../../../../shared/tools/web.js";
import { BraveProvider, RunFilesProvider, type SearchProvider, SearxngProvider, TavilyProvider } from "../../../../shared/web/search.js";
import { braveAnswer, tavilyAnswer } from "../../../support/searchApiFixtures.js";

/** web_fetch, web_search and deep_search against a real HTTP server on loopback. */
const ARTICLE = `<!doctype html><html><head><title>Solar power - Example</title><script>window.tracking = 1</script></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Solar power in 2026</h1>
<p>Solar power capacity grew by 30 percent in 2026, led by utility-scale plants in sunny regions. Panels are cheaper than ever.</p>
<p>Storage is the bottleneck: batteries smooth the evening peak, and <a href="/batteries">battery prices</a> fell again this year.</p>
<h2>Outlook</h2><ul><li>More rooftop solar</li><li>Grid upgrades</li></ul>
<p>Analysts expect solar to stay the fastest-growing source of power for the rest of the decade.</p></article>
<footer>Copyright Example</footer></body></html>`;

const TABLE_PAGE = `<!doctype html><html><head><title>Capacity</title></head><body><article><h1>Capacity by year</h1>
<p>Installed solar capacity, in gigawatts, as the agency reported it at the end of each year.</p>
<table><thead><tr><th>year</th><th>capacity (GW)</th></tr></thead><tbody><tr><td>2025</td><td>1,800</td></tr><tr><td>2026</td><td>2,340 | est.</td></tr></tbody></table>
<p>The figure for 2026 is an estimate until the final report.</p></article></body></html>`;

let server: Server;
const searchRequests: string[] = [];
let base: string;
const limits = (overrides: Partial<FetchLimits> = {}): FetchLimits => ({
  timeoutMs: 5_000,
  maxBytes: 100_000,
  maxRedirects: 3,
  allowLoopback: true,
  allowHttp: true,
  ...overrides,
});
const call = async (tool: any, args: unknown, files = new MemoryFileStore()) =>
  new ToolRegistry([tool]).execute({ id: "c1", name: tool.name, arguments: JSON.stringify(args) }, testToolContext({ files }));

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, "http://x");
    const hop = /^\/hop\/(\d+)$/.exec(url.pathname);
    if (url.pathname === "/article") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE);
    if (url.pathname === "/table") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(TABLE_PAGE);
    if (hop) return res.writeHead(302, { location: Number(hop[1]) > 0 ? `/hop/${Number(hop[1]) - 1}` : "/article" }).end();
    if (url.pathname === "/to-metadata") return res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    if (url.pathname === "/big")
      return res.writeHead(200, { "content-type": "text/html", "content-length": String(200_000) }).end("x".repeat(200_000));
    if (url.pathname === "/big-chunked") {
      res.writeHead(200, { "content-type": "text/html" });
      for (let i = 0; i < 20; i++) res.write("y".repeat(10_000));
      return res.end();
    }
    if (url.pathname === "/slow") return setTimeout(() => res.writeHead(200).end("late"), 3_000);
    if (url.pathname === "/image") return res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50]));
    // The search APIs answer their recorded responses only to a request made as their documentation says.
    if (url.pathname === "/tavily/search") {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      return req.on("end", () => {
        const asked = JSON.parse(body || "{}");
        if (
          req.method !== "POST" ||
          req.headers.authorization !== "Bearer tvly-test-key" ||
          !req.headers["content-type"]?.startsWith("application/json")
        )
          return res.writeHead(401).end('{"detail":{"error":"Unauthorized: missing or invalid API key."}}');
        if (typeof asked.query !== "string" || typeof asked.max_results !== "number") return res.writeHead(400).end();
        searchRequests.push(`tavily ${asked.query}`);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(tavilyAnswer(base)));
      });
    }
    if (url.pathname === "/brave/res/v1/web/search") {
      if (
        req.method !== "GET" ||
        req.headers["x-subscription-token"] !== "brave-test-key" ||
        !req.headers.accept?.includes("application/json")
      )
        return res.writeHead(401).end('{"type":"ErrorResponse","error":{"status":401,"code":"SUBSCRIPTION_TOKEN_INVALID"}}');
      if (!url.searchParams.get("q") || !url.searchParams.get("count")) return res.writeHead(422).end();
      searchRequests.push(`brave ${url.searchParams.get("q")}`);
      return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(braveAnswer(base)));
    }
    // A search service in trouble: over its quota, down, or refusing a malformed request.
    const trouble = /^\/(\d{3})\/search$/.exec(url.pathname);
    if (trouble) return res.writeHead(Number(trouble[1]), { "content-type": "application/json" }).end('{"error":"trouble"}');
    if (url.pathname === "/search") {
      const q = url.searchParams.get("q") ?? "";
      return res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          results: [
            { title: "Solar power in 2026", url: `${base}/article`, content: `About ${q}` },
            { title: "Gone", url: `${base}/missing`, content: "" },
            { title: "not http", url: "ftp://x", content: "" },
          ],
        }),
      );
    }
    res.writeHead(404).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("web_fetch", () => {
  it("returns the article as Markdown, without navigation or scripts, with its source first", async () => {
    const { ok, output } = await call(webFetchTool(limits()), { url: `${base}/article` });
    expect(ok).toBe(true);
    expect(output.split("\n")[0]).toBe(`Source: ${base}/article`);
    expect(output).toMatch(/Solar power capacity grew by 30 percent in 2026/);
    expect(output).toMatch(/## Outlook/);
    expect(output).toMatch(/-\s+More rooftop solar/);
    expect(output).toContain(`[battery prices](${base}/batteries)`);
    expect(output).not.toMatch(/tracking|Copyright|About\]/);
  });

  it("keeps a table's rows and columns as a Markdown table", async () => {
    const { output } = await call(webFetchTool(limits()), { url: `${base}/table` });
    expect(output).toContain(
      "the end of each year.\n\n| year | capacity (GW) |\n| --- | --- |\n| 2025 | 1,800 |\n| 2026 | 2,340 \\| est. |\n\nThe figure for 2026",
    );
  });

  it("follows redirects up to the limit and cites where it ended", async () => {
    const { output } = await call(webFetchTool(limits()), { url: `${base}/hop/2` });
    expect(output.split("\n")[0]).toBe(`Source: ${base}/article`);
    const tooMany = await call(webFetchTool(limits()), { url: `${base}/hop/5` });
    expect(tooMany).toEqual({ ok: false, output: expect.stringMatching(/redirects more than 3 times/) });
  });

  it("refuses pages over the size limit, declared or not", async () => {
    for (const path of ["/big", "/big-chunked"]) {
      const { ok, output } = await call(webFetchTool(limits()), { url: `${base}${path}` });
      expect(ok).toBe(false);
      expect(output).toMatch(/over 100000 bytes, the page size limit/);
    }
  });

  it("gives up on a page that does not answer in time", async () => {
    const { ok, output } = await call(webFetchTool(limits({ timeoutMs: 300 })), { url: `${base}/slow` });
    expect(ok).toBe(false);
    expect(output).toMatch(/did not answer within 0.3 s/);
  });

  it.each([
    ["loopback when not allowed", (b: string) => `${b}/article`, { allowLoopback: false }, /loopback/],
    ["the cloud metadata service", () => "http://169.254.169.254/latest/meta-data/", {}, /cloud metadata service/],
    ["a private network", () => "http://10.1.2.3/", {}, /private/],
    ["IPv6 loopback", () => "http://[::1]:9/", { allowLoopback: false }, /loopback/],
    ["a redirect to the metadata service", (b: string) => `${b}/to-metadata`, {}, /cloud metadata service/],
    ["plain http when not allowed", (b: string) => `${b}/article`, { allowHttp: false }, /must use https/],
    ["credentials in the URL", () => "http://user:pw@example.com/", {}, /credentials/],
  ])("refuses %s", async (_name, url, overrides, reason) => {
    const { ok, output } = await call(webFetchTool(limits(overrides)), { url: url(base) });
    expect(ok).toBe(false);
    expect(output).toMatch(/refused/);
    expect(output).toMatch(reason);
  });

  it("refuses what is not a text page", async () => {
    const { output } = await call(webFetchTool(limits()), { url: `${base}/image` });
    expect(output).toMatch(/not a text page \(image\/png\)/);
  });
});

describe("web_search and deep_search", () => {
  it("are offered only with a provider configured", () => {
    const names = (env: Record<string, string>) =>
      workTools(settingsFromEnv({ TABLE_NAME: "t", ...env }), agentClients("us-east-1")).map((t) => t.name);
    expect(names({})).not.toContain("web_search");
    expect(names({})).toEqual(expect.arrayContaining(["run_code", "web_fetch", "write_report"]));
    expect(names({ WEB_SEARCH_PROVIDER: "files" })).toEqual(expect.arrayContaining(["web_search", "deep_search"]));
    expect(() => names({ WEB_SEARCH_PROVIDER: "searxng" })).toThrow(/SEARXNG_URL/);
    expect(() => names({ WEB_SEARCH_PROVIDER: "tavily" })).toThrow(
      /needs TAVILY_API_KEY \(or TAVILY_API_KEY_SECRET_ARN, a Secrets Manager secret holding it\)/,
    );
    expect(() => names({ WEB_SEARCH_PROVIDER: "brave" })).toThrow(/needs BRAVE_API_KEY \(or BRAVE_API_KEY_SECRET_ARN/);
    expect(names({ WEB_SEARCH_PROVIDER: "brave", BRAVE_API_KEY: "k" })).toEqual(expect.arrayContaining(["web_search", "deep_search"]));
    // Deployed, the key's secret is named instead: nothing is read until a search needs it.
    expect(
      names({
        WEB_SEARCH_PROVIDER: "tavily",
        TAVILY_API_KEY_SECRET_ARN: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tavily-AbCdEf",
      }),
    ).toEqual(expect.arrayContaining(["web_search", "deep_search"]));
  });

  it("searches a SearXNG JSON API and numbers the results", async () => {
    const { output } = await call(webSearchTool(new SearxngProvider(base, limits())), { query: "solar power", limit: 5 });
    expect(output).toBe(`1. Solar power in 2026\n   ${base}/article\n   About solar power\n2. Gone\n   ${base}/missing\n   `);
  });

  it("deep_search reads the best pages and returns notes with numbered sources", async () => {
    const { output } = await call(deepSearchTool(new SearxngProvider(base, limits())), {
      question: "How fast did solar power capacity grow?",
    });
    expect(output).toMatch(/^Notes on: How fast did solar power capacity grow\?/);
    expect(output).toMatch(/- Solar power capacity grew by 30 percent in 2026[^\n]* \[1\]/);
    expect(output).toContain(`Sources:\n1. Solar power - Example — ${base}/article`);
    expect(output).not.toMatch(/- #/); // headings are not notes
    expect(output).not.toContain("missing"); // the page that failed is not a source
  });

  it("searches the run's own files offline", async () => {
    const files = new MemoryFileStore();
    await files.put("run_test", "energy.md", "# Energy\n\nWind power is growing.\n\nSolar power capacity grew by 30 percent.\n");
    await files.put("run_test", "recipes.md", "Bread needs flour and water.");
    await files.put("run_test", "photo.png", new Uint8Array([1, 2, 3]));
    const search = await call(webSearchTool(new RunFilesProvider()), { query: "solar capacity" }, files);
    expect(search.output).toMatch(/^1\. energy\.md\n {3}file:energy\.md\n {3}.*Solar power capacity/);
    expect(search.output).not.toMatch(/recipes|photo/);
    const deep = await call(deepSearchTool(new RunFilesProvider()), { question: "solar capacity growth" }, files);
    expect(deep.output).toContain("- Solar power capacity grew by 30 percent. [1]");
    expect(deep.output).toContain("Sources:\n1. energy.md — file:energy.md");
  });

  it("a Chinese question over Chinese pages returns notes quoting the passages that answer it", async () => {
    const files = new MemoryFileStore();
    for (const name of ["solar.md", "wind.md", "recipes.md"])
      await files.put("run_test", name, readFileSync(new URL(`../../../fixtures/searchZh/${name}`, import.meta.url), "utf8"));
    const search = await call(webSearchTool(new RunFilesProvider()), { query: "太阳能装机容量" }, files);
    expect(search.output).toMatch(/^1\. solar\.md\n {3}file:solar\.md\n {3}.*全球太阳能装机容量增长了百分之三十/);
    const { ok, output } = await call(deepSearchTool(new RunFilesProvider()), { question: "2026年太阳能装机容量增长了多少？" }, files);
    expect(ok).toBe(true);
    const notes = output.split("\n").filter((line) => line.startsWith("- "));
    // The passage that answers comes first, from the first source; the page about cooking is no source.
    expect(notes[0]).toBe("- 2026年，全球太阳能装机容量增长了百分之三十，主要来自大型地面电站和屋顶光伏。 [1]");
    expect(notes).toContain("- 分析师预计，在本十年余下的时间里，太阳能仍将是增长最快的电源。 [1]");
    expect(notes.join("\n")).not.toContain("电池的价格"); // a paragraph of the page that does not answer
    expect(output).toContain("Sources:\n1. solar.md — file:solar.md");
    expect(output).not.toContain("recipes.md");
  });

  const providers: [string, () => SearchProvider, () => SearchProvider][] = [
    [
      "Tavily",
      () => new TavilyProvider(fixedKey("tvly-test-key"), limits(), `${base}/tavily`),
      () => new TavilyProvider(fixedKey("wrong"), limits(), `${base}/tavily`),
    ],
    [
      "Brave",
      () => new BraveProvider(fixedKey("brave-test-key"), limits(), `${base}/brave`),
      () => new BraveProvider(fixedKey("wrong"), limits(), `${base}/brave`),
    ],
  ];

  it.each([
    ["Tavily", "tvly-test-key", (key: SecretKey) => new TavilyProvider(key, limits(), `${base}/tavily`)],
    ["Brave", "brave-test-key", (key: SecretKey) => new BraveProvider(key, limits(), `${base}/brave`)],
  ])(
    "%s: a key in Secrets Manager is read when a search needs it, and again after the API refused it (401)",
    async (name, goodKey, provider) => {
      // A stand-in for Secrets Manager that answers GetSecretValue with what the secret holds now.
      const secret = { value: "expired-key", reads: 0 };
      const client = {
        send: async () => {
          secret.reads++;
          return { SecretString: secret.value };
        },
      } as never;
      const search = webSearchTool(provider(new SecretKey(client, "arn:aws:secretsmanager:eu-west-1:123456789012:secret:search-AbCdEf")));
      expect(secret.reads).toBe(0);
      const refused = await call(search, { query: "solar power" });
      expect(refused.output).toContain(`the ${name.toLowerCase()} search API answered 401`);
      secret.value = goodKey; // the operator fixes the secret; no deploy
      expect((await call(search, { query: "solar power" })).output).toMatch(/^1\. Solar power in 2026/);
      await call(search, { query: "solar power" });
      // Read for the first search, again after the 401, and not on every search while it works.
      expect(secret.reads).toBe(2);
    },
  );

  it.each(providers)("%s: web_search numbers the web results of its documented answer", async (_, provider) => {
    const { output } = await call(webSearchTool(provider()), { query: "solar power", limit: 5 });
    expect(output.split("\n").slice(0, 3)).toEqual([
      "1. Solar power in 2026",
      `   ${base}/article`,
      expect.stringMatching(/^ {3}Solar power capacity grew by 30 percent in 2026/),
    ]);
    expect(output).not.toMatch(/<strong>|ftp:/);
  });

  it.each(providers)(
    "%s: a key the API refuses is a failure a person can fix (a tool_failure pause), saying so",
    async (name, _, refused) => {
      const { ok, output, fixable } = await call(webSearchTool(refused()), { query: "solar power" });
      expect(ok).toBe(false);
      expect(output).toContain(`the ${name.toLowerCase()} search API answered 401`);
      expect(fixable).toEqual({ reason: "unauthorized", status: 401 });
    },
  );

  it.each([
    [403, { reason: "forbidden", status: 403 }],
    [429, { reason: "rate_limited", status: 429 }],
    [503, { reason: "unavailable", status: 503 }],
    [400, undefined],
  ])("a search API answering %i: fixable %j (a malformed request is the model's to read)", async (status, fixable) => {
    const outcome = await call(webSearchTool(new SearxngProvider(`${base}/${status}`, limits())), { query: "solar power" });
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toContain(`the searxng search API answered ${status}`);
    expect(outcome.fixable).toEqual(fixable);
  });

  it.each(providers)(
    "%s: deep_search whose every search is refused fails as web_search does: a person can fix the key",
    async (name, _, refused) => {
      const { ok, output, fixable } = await call(deepSearchTool(refused()), { question: "How fast did solar power grow?" });
      expect(ok).toBe(false);
      expect(output).toContain(`the ${name.toLowerCase()} search API answered 401`);
      expect(fixable).toEqual({ reason: "unauthorized", status: 401 });
    },
  );

  it("a search API that cannot be reached (connection refused) is unavailable: a person can bring it back", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await call(webSearchTool(new SearxngProvider(`http://127.0.0.1:${port}`, limits())), { query: "solar power" });
    expect(outcome.output).toContain("the searxng search API could not be reached");
    expect(outcome.fixable).toEqual({ reason: "unavailable" });
  });

  it.each(providers)(
    "%s: deep_search shows its stages, keeps its notes as a Markdown file with numbered sources",
    async (name, provider) => {
      const files = new MemoryFileStore();
      const progress: ToolProgress[] = [];
      searchRequests.length = 0;
      const output = await deepSearchTool(provider()).run(
        { question: "How fast did solar power capacity grow?" },
        testToolContext({ files, progress: (event) => progress.push(event) }),
      );
      expect(searchRequests).toEqual([
        `${name.toLowerCase()} How fast did solar power capacity grow?`,
        `${name.toLowerCase()} fast solar power capacity grow`,
      ]);
      expect(progress.map((e) => e.type === "search.progress" && [e.data.stage, e.data.count])).toEqual([
        ["queries", 2],
        ["pages", 1],
        ["notes", 3],
      ]);
      expect(output).toContain("Saved as notes-how-fast-did-solar-power-capacity-grow.md.");
      const notes = fileText((await files.get("run_test", "notes-how-fast-did-solar-power-capacity-grow.md"))!);
      expect(notes).toMatch(
        /^# Notes on: How fast did solar power capacity grow\?\n\n- Solar power capacity grew by 30 percent in 2026[^\n]* \[1\]\n/,
      );
      expect(notes).toContain(`## Sources\n\n1. [Solar power - Example](${base}/article)\n`);
      expect(notes).not.toContain("missing");
    },
  );
});
