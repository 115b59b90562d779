import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EsbuildBundling } from "../../infra/aws/stepwiseFunction.js";
import { buildTokenizerLayer } from "../../infra/aws/tokenizerLayer.js";
import type { ChatMessage } from "../../shared/llm/types.js";
import { tokenCounterFor } from "../../shared/memory/tokens.js";
import { png } from "../support/png.js";

/**
 * The token counter as an agent function runs it: bundled as the functions are, in a folder with
 * no node_modules above it, the tokenizer layer on NODE_PATH. The rank tables and the image reader
 * are not in the bundle (a cold start does not read them); they come from the layer on first use.
 */
const work = mkdtempSync(path.join(tmpdir(), "stepwise-tokenizer-layer-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the tokenizer layer", () => {
  it("gives the bundled counter its rank tables and, on the first image, its image reader", () => {
    const modules = path.join(work, "opt/nodejs/node_modules");
    buildTokenizerLayer(modules);
    new EsbuildBundling("shared/memory/tokens.ts").tryBundle(path.join(work, "task"));
    const image = `data:image/png;base64,${png(1024, 1024).toString("base64")}`;
    writeFileSync(path.join(work, "image.txt"), image);
    const script = path.join(work, "task/count.mjs");
    writeFileSync(
      script,
      `import { readFileSync } from "node:fs";
import { tokenCounterFor } from "./index.mjs";
const counter = tokenCounterFor("gpt-4o");
const text = counter.count("Count these words, please.");
const url = readFileSync(${JSON.stringify(path.join(work, "image.txt"))}, "utf8");
const image = counter.countMessages([{ role: "user", content: [{ type: "image_url", image_url: { url } }] }]);
console.log(JSON.stringify({ text, image }));
`,
    );
    const count = () => spawnSync(process.execPath, [script], { cwd: work, encoding: "utf8", env: { ...process.env, NODE_PATH: modules } });

    const counted = count();
    expect(counted.status, counted.stderr).toBe(0);
    // The same counts as the counter in this process: a 1024×1024 image is 4 tiles at detail "auto", 85 + 4 × 170.
    const here = tokenCounterFor("gpt-4o");
    const message: ChatMessage = { role: "user", content: [{ type: "image_url", image_url: { url: image } }] };
    expect(JSON.parse(counted.stdout)).toEqual({ text: here.count("Count these words, please."), image: here.countMessages([message]) });
    expect(here.countMessages([message])).toBe(3 + 3 + here.count("user") + 765);

    // The reader is the layer's: without it, the bundle cannot count an image (and says why).
    rmSync(path.join(modules, "image-size"), { recursive: true });
    const without = count();
    expect(without.status).not.toBe(0);
    expect(without.stderr).toContain("Cannot find module 'image-size'");
  });
});
