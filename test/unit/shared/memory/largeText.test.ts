import { describe, expect, it } from "vitest";
import { cutToBytes, fitText, MAX_INLINE_BYTES } from "../../../../shared/memory/largeText.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";

/** A run's or task's result on its record: kept inline up to 100,000 bytes, not characters (CJK is 3 bytes each). */
describe("fitText", () => {
  it("keeps a Chinese answer of 60,000 characters (180,000 bytes) inline only up to 100,000 bytes, the whole in a file, no character cut", async () => {
    const files = new MemoryFileStore();
    const answer = "这是一份很长的中文报告。".repeat(5_000); // 60,000 characters
    const kept = await fitText(files, "run_1", "answer.md", answer);
    const [inline, note] = kept.split("\n\n[");
    expect(Buffer.byteLength(inline!)).toBeLessThanOrEqual(MAX_INLINE_BYTES);
    expect(Buffer.byteLength(inline!)).toBeGreaterThan(MAX_INLINE_BYTES - 3);
    expect(answer.startsWith(inline!)).toBe(true);
    expect(note).toBe("cut at 100000 of 180000 bytes: the whole text is the run's file answer.md]");
    expect(Buffer.from((await files.get("run_1", "answer.md"))!.body).toString("utf8")).toBe(answer);
  });

  it("keeps a text within 100,000 bytes as it is, and never cuts a character in two", async () => {
    const files = new MemoryFileStore();
    const text = "数".repeat(33_333); // 99,999 bytes
    expect(await fitText(files, "run_1", "answer.md", text)).toBe(text);
    expect(await files.list("run_1")).toEqual([]);
    expect(cutToBytes("a数b", 2)).toBe("a");
    expect(cutToBytes("a数b", 4)).toBe("a数");
  });
});
