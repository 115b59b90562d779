import { describe, expect, it } from "vitest";
import { fileText } from "../../shared/ports/files.js";
import { testToolContext } from "../../shared/testing/toolContext.js";
import { MemoryFileStore } from "../../shared/testing/memoryFiles.js";
import { writeReport } from "../../shared/tools/writeReport.js";

describe("write_report", () => {
  it("renders HTML from Markdown: headings, tables, numbered sources, inline CSS, no scripts", async () => {
    const files = new MemoryFileStore();
    const content = [
      "## Totals",
      "| region | total |",
      "|---|---|",
      "| north | 220 |",
      "",
      "A [click](javascript:alert(1)) link.",
      "",
      "<script>alert('x')</script>",
      '<img src="x" onerror="alert(1)">',
      '<iframe src="https://evil.example"></iframe>',
      "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
    ].join("\n");
    const output = await writeReport.run(
      { title: "Sales <2026>", format: "html", content, sources: [{ url: "https://example.com/a", title: "Source A" }, { url: "https://example.com/b" }] },
      testToolContext({ files }),
    );
    expect(output).toBe(`Saved the report sales-2026.html (${(await files.get("run_test", "sales-2026.html"))!.bytes} bytes, text/html).`);
    const html = fileText((await files.get("run_test", "sales-2026.html"))!);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/onerror|href="javascript:|<iframe/i);
    expect(html).toContain("<title>Sales &#60;2026&#62;</title>");
    expect(html).toMatch(/<h2[^>]*>Totals<\/h2>/);
    expect(html).toMatch(/<td>north<\/td>\s*<td>220<\/td>/);
    expect(html).toContain('<ol class="sources"><li><a href="https://example.com/a" rel="noopener noreferrer">Source A</a></li><li><a href="https://example.com/b"');
    expect(html).toMatch(/<style>[^<]+<\/style>/);
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/<link|src="http/i);
  });

  it("stores Markdown as written, with a title and numbered sources", async () => {
    const files = new MemoryFileStore();
    await writeReport.run({ title: "Notes", format: "markdown", content: "Body text.", sources: [{ url: "https://example.com/a", title: "A" }] }, testToolContext({ files }));
    const file = (await files.get("run_test", "notes.md"))!;
    expect(file.contentType).toBe("text/markdown");
    expect(fileText(file)).toBe("# Notes\n\nBody text.\n\n## Sources\n\n1. [A](https://example.com/a)\n");
  });
});
