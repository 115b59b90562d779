import { describe, expect, it } from "vitest";
import { STREAM_EVENT_TYPES } from "../../infra/console/src/eventTypes.js";
import { EventBody } from "../../shared/contracts/events.js";

describe("the console's stream", () => {
  it("listens for every event type the API sends (EventSource drops named events nobody listens for)", () => {
    const sent = EventBody.options.map((option) => option.shape.type.value);
    expect([...STREAM_EVENT_TYPES].sort()).toEqual([...sent].sort());
  });
});
