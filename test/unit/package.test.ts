import { readFileSync } from "node:fs";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { documentMarkdown } from "../../shared/documents/documents.js";
import { pdfDocument } from "../support/documents.js";
import { START_NODE_FLAGS } from "../support/localStack.js";

/**
 * What `npm ci` on a supported Node version has to say: the engines field must fit every
 * installed package, and every package's install script must be settled in `allowScripts`.
 */
const pkg = JSON.parse(readFileSync("package.json", "utf8"));
const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const installed = Object.entries(
  lock.packages as Record<string, { engines?: { node?: string }; hasInstallScript?: boolean; optional?: boolean }>,
)
  .filter(([path]) => path.startsWith("node_modules/"))
  .map(([path, entry]) => ({ name: path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length), ...entry }));

/** Packages that ask for a newer Node than ours, and why they still run on every version we support. */
const KNOWN_ENGINE_GAPS: Record<string, string> = {
  // Its only published version declares Node 22; the Step Functions emulators that declare less
  // run AWS's Java emulator or speak no Step Functions API.
  "aws-local-stepfunctions": "only Promise.withResolvers is newer than Node 20; infra/local/stepFunctions.ts polyfills it",
  // Node 22.12 is where require() takes ES modules; we import it as one, and it uses nothing newer than Node 20.
  "eventsource-parser": "parses the API client's event streams on Node 20 (imported as an ES module)",
};

describe("package support", () => {
  it("runs on the Node version npm test asked for (the second part runs on 22, the Lambda runtime)", () => {
    const major = process.env.STEPWISE_TEST_NODE_MAJOR;
    if (major) expect(process.versions.node.split(".")[0]).toBe(major);
  });

  it("supports the Node version this runs on and the Lambda runtime's (22)", () => {
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
    expect(semver.satisfies("22.13.0", pkg.engines.node)).toBe(true);
    expect(semver.satisfies("18.20.0", pkg.engines.node)).toBe(false);
  });

  it("asks for no Node version a required package does not support, except the known gaps", () => {
    const gaps = installed
      .filter((entry) => !entry.optional && entry.engines?.node && !semver.subset(pkg.engines.node, entry.engines.node))
      .map((entry) => entry.name);
    expect([...new Set(gaps)].sort()).toEqual(Object.keys(KNOWN_ENGINE_GAPS).sort());
  });

  it("bridges each known gap on this Node, and runs the versions pinned for Node 20", async () => {
    await import("../../infra/local/stepFunctions.js");
    expect(typeof (Promise as unknown as { withResolvers?: unknown }).withResolvers).toBe("function");
    // unpdf 1.7.0 and vega-lite 6.4.3: the last versions that do not ask for Node 22 (package.json pins them).
    const { compile } = await import("vega-lite");
    expect(
      compile({ data: { values: [{ a: 1 }] }, mark: "point", encoding: { x: { field: "a", type: "quantitative" } } }).spec.marks,
    ).toHaveLength(1);
    expect(await documentMarkdown("one.pdf", pdfDocument(["Node 20 reads this"]))).toBe("## Page 1\n\nNode 20 reads this");
    const { createParser } = await import("eventsource-parser");
    const ids: string[] = [];
    createParser({ onId: (id) => ids.push(id) }).feed("id: 7\r\ndata: x\r\n\r\n");
    expect(ids).toEqual(["7"]);
  });

  it("settles every install script explicitly in allowScripts", () => {
    const withScripts = [...new Set(installed.filter((entry) => entry.hasInstallScript).map((entry) => entry.name))].sort();
    expect(Object.keys(pkg.allowScripts ?? {}).sort()).toEqual(withScripts);
  });

  it("starts the local stack in tests and benchmarks exactly as `npm start` does", () => {
    expect(pkg.scripts.start).toBe(`node ${START_NODE_FLAGS.join(" ")} infra/local/main.ts`);
  });
});
