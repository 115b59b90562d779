import { describe, expect, it } from "vitest";
import { StreamedText, textSource } from "../../../../shared/apiClient/streamedText.js";

describe("StreamedText", () => {
  it("gathers an agent's deltas into one block, apart from other agents and tasks, and a view made once per block", () => {
    const text = new StreamedText<string[]>();
    const opened: string[] = [];
    const open = (name: string) => () => {
      opened.push(name);
      return [name];
    };
    text.add({ agent: "executor", taskId: "t1" }, "17*", open("t1"));
    text.add({ agent: "executor", taskId: "t2" }, "47", open("t2"));
    const block = text.add({ agent: "executor", taskId: "t1" }, "23 = 391", open("t1 again"));
    expect(block).toMatchObject({ text: "17*23 = 391", view: ["t1"] });
    expect(opened).toEqual(["t1", "t2"]);
    expect(text.open().map((b) => b.text)).toEqual(["17*23 = 391", "47"]);
  });

  it("a thought after deltas ends their block (it repeats them); without deltas there is no block to end", () => {
    const text = new StreamedText();
    text.add({ agent: "react" }, "It is 2.", () => undefined);
    expect(text.end({ agent: "react" })?.text).toBe("It is 2.");
    // The next thought came without deltas: the model did not stream it.
    expect(text.end({ agent: "react" })).toBeUndefined();
    // A new delta after the block ended starts a new block.
    expect(text.add({ agent: "react" }, "Next.", () => undefined).text).toBe("Next.");
  });

  it("finds the agent of an event's data, if it names one", () => {
    expect(textSource({ agent: "planner", text: "x" })).toEqual({ agent: "planner", text: "x" });
    expect(textSource({ taskId: "t1", status: "succeeded" })).toBeUndefined();
    expect(textSource(null)).toBeUndefined();
  });
});
