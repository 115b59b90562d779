import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type Files, headingAnchors, linkProblems } from "../support/docLinks.js";

/**
 * The README and docs/ lead where they say: every relative link to a file that exists, every
 * #anchor to a heading of its page, and every pointer to a page's section (in the pages and in the
 * code's comments) to a heading that exists.
 */

const root = path.resolve(import.meta.dirname, "../..");
/** The checker and this test write broken pointers on purpose. */
const SELF = new Set(["test/support/docLinks.ts", "test/unit/docs.test.ts"]);
const SKIPPED = new Set(["node_modules", "dist", "cdk.out", "fixtures", "screenshots"]);

function walk(dir: string, keep: (file: string) => boolean): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name.startsWith(".") || SKIPPED.has(entry.name) ? [] : walk(file, keep);
    return keep(file) && !SELF.has(file) ? [file] : [];
  });
}

function repositoryFiles(): Files {
  const pages = ["README.md", ...walk("docs", (file) => file.endsWith(".md"))];
  const code = ["shared", "functions", "infra", "test"].flatMap((dir) => walk(dir, (file) => /\.(ts|mts|mjs|js)$/.test(file)));
  return new Map([...pages, ...code].map((file) => [file, readFileSync(path.join(root, file), "utf8")]));
}

describe("links and section pointers", () => {
  it("every link, anchor and section pointer of the README, docs/ and the code leads somewhere", () => {
    const files = repositoryFiles();
    expect(files.size).toBeGreaterThan(100);
    expect(linkProblems(files, (file) => existsSync(path.join(root, file)))).toEqual([]);
  });

  // The check itself, on pages written for it: each mistake is found, nothing right is reported.
  const pages: Files = new Map([
    [
      "README.md",
      [
        "# Stepwise",
        "## The `npm start` tour & more",
        "## Notes",
        "## Notes",
        "See [the API](docs/api.md), [its webhooks](docs/api.md#webhooks), [the tour](#the-npm-start-tour--more), [the second notes](#notes-1).",
        "```",
        "[not a link](nowhere.md)",
        "```",
      ].join("\n"),
    ],
    [
      "docs/api.md",
      "# API\n\n## Webhooks\n\nBack to the [README](../README.md); [Configuration](configuration.md), [License](../LICENSE).",
    ],
    ["docs/configuration.md", "# Configuration\n\n[Webhooks](api.md#webhooks)"],
    ["shared/settings.ts", '/** Why (docs/api.md, "Webhooks"); the old place (README, "Notes"). */'],
  ]);
  const existing = (files: Files) => (file: string) => files.has(file) || file === "LICENSE";

  it("finds nothing wrong in pages whose links and pointers all lead somewhere (code blocks hold no links)", () => {
    expect(headingAnchors(pages.get("README.md") ?? "")).toEqual(new Set(["stepwise", "the-npm-start-tour--more", "notes", "notes-1"]));
    expect(linkProblems(pages, existing(pages))).toEqual([]);
  });

  it("reports a link to a missing file, an anchor no heading has, a pointer to a missing section and a design document's section", () => {
    const broken: Files = new Map([
      ...pages,
      [
        "docs/configuration.md",
        "# Configuration\n\n[gone](gone.md), [license](../LICENSE), [wrong anchor](api.md#retries), [outside](../../x.md)",
      ],
      ["infra/aws/stepwise.ts", '// see (docs/operating.md, "Operating"); (docs/api.md, "Retries"); (README, "Configuration"); DESIGN §7'],
    ]);
    expect(linkProblems(broken, existing(broken))).toEqual([
      "docs/configuration.md: the link gone.md leads to no file",
      "docs/configuration.md: the link api.md#retries names no heading of docs/api.md",
      "docs/configuration.md: the link ../../x.md leads to no file",
      'infra/aws/stepwise.ts: "docs/operating.md, Operating" points to a page that does not exist',
      'infra/aws/stepwise.ts: "docs/api.md, Retries" names no heading of docs/api.md',
      'infra/aws/stepwise.ts: "README, Configuration" names no heading of README.md',
      'infra/aws/stepwise.ts: cites "DESIGN §…", a document this repository does not have',
    ]);
  });
});
