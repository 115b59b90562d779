import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { collectOutputs, OUTPUT_LIMITS } from "../../../../shared/sandbox/collectOutputs.js";

/** What a sandbox left in output/, read as the parent reads it: every entry checked, none trusted. */
let folder: string;
const setup = () => (folder = mkdtempSync(path.join(tmpdir(), "stepwise-outputs-")));
const at = (name: string) => path.join(folder, name);
const names = () => collectOutputs(folder).outputs.map((o) => o.name);

afterEach(() => rmSync(folder, { recursive: true, force: true }));

describe("collecting a sandbox's outputs", () => {
  it("keeps files in subfolders as sub/name, with their bytes", () => {
    setup();
    mkdirSync(at("charts/2026"), { recursive: true });
    writeFileSync(at("charts/2026/q1.csv"), "a,b\n");
    writeFileSync(at("top.txt"), "top");
    const { outputs, refused } = collectOutputs(folder);
    expect(outputs.map((o) => [o.name, Buffer.from(o.base64, "base64").toString()])).toEqual([
      ["charts/2026/q1.csv", "a,b\n"],
      ["top.txt", "top"],
    ]);
    expect(refused).toEqual([]);
  });

  it("refuses symbolic links, hard links and pipes without opening them, and keeps the rest", () => {
    setup();
    const outside = mkdtempSync(path.join(tmpdir(), "stepwise-host-"));
    try {
      writeFileSync(path.join(outside, "secret"), "host secret");
      symlinkSync(path.join(outside, "secret"), at("link"));
      linkSync(path.join(outside, "secret"), at("hard"));
      execFileSync("mkfifo", [at("pipe")]);
      writeFileSync(at("kept.txt"), "kept");
      const { outputs, refused } = collectOutputs(folder);
      expect(outputs.map((o) => o.name)).toEqual(["kept.txt"]);
      expect(refused).toEqual([
        "hard: a hard link, not saved",
        "link: a symbolic link, not saved",
        "pipe: not a regular file (a device, socket or pipe), not saved",
      ]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("stops at the limits of count, size and depth, saying what it left out", () => {
    setup();
    for (let i = 0; i < OUTPUT_LIMITS.files + 2; i++) writeFileSync(at(`f${String(i).padStart(2, "0")}.txt`), "x");
    expect(names()).toHaveLength(OUTPUT_LIMITS.files);
    rmSync(folder, { recursive: true });
    setup();
    writeFileSync(at("a.bin"), Buffer.alloc(OUTPUT_LIMITS.bytes - 10));
    writeFileSync(at("b.bin"), Buffer.alloc(20));
    writeFileSync(at("c.bin"), Buffer.alloc(5));
    const sized = collectOutputs(folder);
    expect(sized.outputs.map((o) => o.name)).toEqual(["a.bin", "c.bin"]);
    expect(sized.refused).toEqual([`b.bin: the outputs would pass ${OUTPUT_LIMITS.bytes} bytes, not saved`]);
    rmSync(folder, { recursive: true });
    setup();
    mkdirSync(at("1/2/3/4/5/6"), { recursive: true });
    writeFileSync(at("1/2/3/4/5/6/deep.txt"), "deep");
    writeFileSync(at("1/2/3/4/5/ok.txt"), "ok");
    const deep = collectOutputs(folder);
    expect(deep.outputs.map((o) => o.name)).toEqual(["1/2/3/4/5/ok.txt"]);
    expect(deep.refused).toEqual(["1/2/3/4/5/6/: folders nest deeper than 5 levels, not saved"]);
  });
});
