import { describe, expect, it } from "vitest";
import { safeHtml } from "../../../../../infra/console/src/markdown.js";

describe("the console's Markdown (answers and report previews)", () => {
  it("shows arithmetic as written: a * between operands is never emphasis", () => {
    expect(safeHtml("- Evaluate 17*23 with the calculator: 17*23 = 391")).toBe(
      "<ul>\n<li>Evaluate 17*23 with the calculator: 17*23 = 391</li>\n</ul>\n",
    );
    expect(safeHtml("2*3*4 = 24, (120/8)*2 = 30 and 2*(3+4) = 14")).toBe("<p>2*3*4 = 24, (120/8)*2 = 30 and 2*(3+4) = 14</p>\n");
    // Nor does such a * close emphasis opened before it.
    expect(safeHtml("*foo*bar")).toBe("<p>*foo*bar</p>\n");
  });

  it("keeps Markdown emphasis, code and structure", () => {
    expect(safeHtml("**Answer:** *about* 17*23 = 391, `a*b*c`")).toBe(
      "<p><strong>Answer:</strong> <em>about</em> 17*23 = 391, <code>a*b*c</code></p>\n",
    );
    expect(safeHtml("x **2*3** y")).toBe("<p>x <strong>2*3</strong> y</p>\n");
  });

  it("strips everything active, from Markdown and from HTML reports", () => {
    const html = safeHtml('# Hi\n\n<script>alert(1)</script><img src=x onerror="alert(2)">\n\n[x](javascript:alert(3))');
    expect(html).toContain("<h1>Hi</h1>");
    expect(html).toContain("<a href>x</a>");
    expect(html).not.toMatch(/script|onerror|javascript:/);
    expect(safeHtml('<p onclick="x()">ok</p><iframe src="https://example.com"></iframe>', "text/html")).toBe("<p>ok</p>");
  });
});
