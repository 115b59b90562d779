// Images in a request: a vision model is sent the run's uploaded images as `image_url` parts (data
// URLs). The offline model describes each one from its bytes (type, pixels, size), so the path
// from an upload to the model can be seen without a key; told it cannot see them, it says so.

import { imageSize } from "image-size";
import { isToolImages, listedFiles, systemText, taskOf, toolImagesSinceLastUser } from "./conversation.js";
import { type ChatMessage, type Decision, say } from "./types.js";

/** A request about a picture: "describe the attached image", "what is in this screenshot?". */
const ABOUT_IMAGES = /\b(images?|pictures?|photos?|screenshots?|diagrams?)\b/i;
const IMAGE_FILE = /\.(png|jpe?g|webp|gif)$/i;

/** Plan steps for a request about the run's images: one task that looks at them; else undefined. */
export function imageSteps(request: string, files: readonly string[]): Array<Record<string, unknown>> | undefined {
  const images = files.filter((name) => IMAGE_FILE.test(name));
  if (!ABOUT_IMAGES.test(request) || images.length === 0) return undefined;
  return [{ title: "Look at the images", tasks: [`Describe the image ${images.join(", ")}`], done_when: "Each image is described." }];
}

/** The executor's (or ReAct agent's) move for a task about images, else undefined. */
export function imageMove(messages: readonly ChatMessage[]): Decision | undefined {
  const { task } = taskOf(messages);
  if (!ABOUT_IMAGES.test(task)) return undefined;
  const shown = imagesIn(messages.findLast((m) => m.role === "user" && !isToolImages(m)));
  if (shown.length > 0) {
    // The prompt names the images shown, in the order they come.
    const names = /shown to you with the request: ([^\n]*)\.$/m.exec(systemText(messages))?.[1]?.split(", ") ?? [];
    return say(shown.map((image, i) => `I see ${names[i] ?? `image ${i + 1}`}: ${image}.`).join("\n"));
  }
  const unseen = listedFiles(messages).filter((name) => IMAGE_FILE.test(name));
  if (unseen.length === 0 || !/not shown to you/.test(systemText(messages))) return undefined;
  return say(
    `I cannot see images: ${unseen.join(", ")} ${unseen.length > 1 ? "are files" : "is a file"} I know only by name, type and size.`,
  );
}

/**
 * What the images the last tool calls returned show, one line each, named as their message names
 * them ("Images the tool calls above returned, shown to you: a.png, b.png."), with those left out.
 */
export function toolImagesSeen(messages: readonly ChatMessage[]): string[] {
  return toolImagesSinceLastUser(messages).flatMap((message) => {
    const text = typeof message.content === "string" ? message.content : (message.content ?? []).map((p) => p.text ?? "").join("");
    const names = /: ([^\n]*)\.(?:\n|$)/.exec(text)?.[1]?.split(", ") ?? [];
    const notShown = text.split("\n").filter((line) => line.startsWith("Not shown: "));
    return [...imagesIn(message).map((image, i) => `I see ${names[i] ?? `image ${i + 1}`}: ${image}.`), ...notShown];
  });
}

/** Each image part of a message, described from its data URL: type, pixels and bytes. */
function imagesIn(message: ChatMessage | undefined): string[] {
  if (!message || typeof message.content === "string" || !message.content) return [];
  return message.content.flatMap((part) => {
    const url = part.type === "image_url" ? part.image_url?.url : undefined;
    const data = url ? /^data:(image\/[\w.+-]+);base64,(.*)$/s.exec(url) : null;
    if (!data) return [];
    const bytes = Buffer.from(data[2], "base64");
    const { width, height } = safeSize(bytes);
    return [`${data[1]}${width && height ? `, ${width}×${height} pixels` : ""}, ${bytes.length} bytes`];
  });
}

function safeSize(bytes: Uint8Array): { width?: number; height?: number } {
  try {
    return imageSize(bytes);
  } catch {
    return {};
  }
}
