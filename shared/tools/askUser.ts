import * as z from "zod";
import { defineTool } from "./tool.js";

/** newAgent's ask_user: the agent asks a person a question; the run waits for the answer. */
export const askUser = defineTool({
  name: "ask_user",
  persona: "Assistant",
  description:
    "Ask the user a question when you cannot continue without their answer (a missing detail, a choice only they can make). The run pauses until they answer.",
  access: "read",
  asksUser: true,
  parameters: z.object({ question: z.string().min(1).max(2_000) }),
  async run() {
    throw new Error("ask_user is answered by a person, never run");
  },
});
