/**
 * Images a tool returned (an MCP tool's screenshot) are shown to a model that sees images in a user
 * message after the round's tool results, as JD Genie does: tool messages carry text only in Chat
 * Completions. The message opens with this line, so a reader of the conversation (the offline model)
 * knows it shows tool results, not a new request.
 */
export const TOOL_IMAGES_INTRO = "Images the tool calls above returned, shown to you:";

/** The message's text: the images shown, by run file name, and those left out and why. */
export function toolImagesText(shown: readonly string[], leftOut: readonly string[]): string {
  return [`${TOOL_IMAGES_INTRO} ${shown.length ? shown.join(", ") : "none"}.`, ...leftOut.map((reason) => `Not shown: ${reason}`)].join(
    "\n",
  );
}
