import { describe, expect, it } from "vitest";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { readArtifact, WHOLE_TEXT_BYTES } from "../../../../shared/tools/artifacts.js";

/** read_artifact over in-memory files that record what was read: a big file is read by its slice only. */
function withFiles() {
  const files = new MemoryFileStore();
  const reads: { whole?: string; range?: [number, number] }[] = [];
  const [get, getRange] = [files.get.bind(files), files.getRange.bind(files)];
  files.get = async (runId, name) => {
    reads.push({ whole: name });
    return get(runId, name);
  };
  files.getRange = async (runId, name, start, end) => {
    reads.push({ range: [start, end] });
    return getRange(runId, name, start, end);
  };
  const read = (args: { filename: string; offset?: number; length?: number }) =>
    readArtifact.run(readArtifact.parameters.parse(args), testToolContext({ runId: "run_1", files }));
  return { files, reads, read };
}

describe("read_artifact", () => {
  it("reads a text file over 1 MB by byte range: only the slice asked for, never the whole file", async () => {
    const { files, reads, read } = withFiles();
    const size = 3 * WHOLE_TEXT_BYTES;
    const body = Buffer.alloc(size, "a");
    body.write("THE END", size - 7);
    await files.put("run_1", "big.log", body);
    const tail = await read({ filename: "big.log", offset: size - 7 });
    expect(tail).toBe(`THE END\n[bytes ${size - 7}–${size} of ${size}. That is the end of the file.]`);
    expect(reads).toEqual([{ range: [size - 7, size - 7 + 9_000 * 4] }]);
    const head = await read({ filename: "big.log", length: 10 });
    expect(head).toBe(`aaaaaaaaaa\n[bytes 0–10 of ${size}. Read on with read_artifact {"filename": "big.log", "offset": 10}.]`);
    expect(await read({ filename: "big.log", offset: size })).toBe(`Error: big.log has ${size} bytes; offset ${size} is past its end.`);
    expect(reads.some((r) => r.whole)).toBe(false);
  });

  it("never splits a character: one cut by the range's start is skipped, one cut by its end is left for the next read", async () => {
    const { files, read } = withFiles();
    const text = "数".repeat(WHOLE_TEXT_BYTES); // 3 bytes each
    await files.put("run_1", "cjk.txt", text);
    // Offset 1 falls inside the first character: the read starts at the second (byte 3).
    expect(await read({ filename: "cjk.txt", offset: 1, length: 2 })).toBe(
      `数数\n[bytes 3–9 of ${3 * WHOLE_TEXT_BYTES}. Read on with read_artifact {"filename": "cjk.txt", "offset": 9}.]`,
    );
  });

  it("reads a small file whole, counted in characters, as before", async () => {
    const { files, reads, read } = withFiles();
    await files.put("run_1", "note.md", "hello");
    expect(await read({ filename: "note.md" })).toBe("hello");
    expect(reads).toEqual([{ whole: "note.md" }]);
  });
});
