// Images for models that see them (role setting `vision`): a run's uploaded images reach the model
// as Chat Completions `image_url` parts holding data URLs, within a size limit per image and per
// request, and so do the images its tools return (after the round's tool results). For other
// models they stay files, and the prompt says so.

import type { ChatCompletionContentPart } from "openai/resources/chat/completions";
import { IMAGE_TYPES, type ImageLimits, imageOverLimit } from "../contracts/imageLimits.js";
import { toolImagesText } from "../llm/toolImages.js";
import type { ChatMessage } from "../llm/types.js";
import type { FileMeta, FileStore } from "../ports/files.js";

/** An image a person uploaded for the run (not one a tool wrote). */
export const isUploadedImage = (file: Pick<FileMeta, "contentType" | "description" | "taskId">) =>
  IMAGE_TYPES.has(file.contentType) && file.description === "Uploaded" && !file.taskId;

/** The run's uploaded images as `image_url` parts (data URLs), those within the limits. */
export async function uploadedImageParts(
  files: FileStore,
  runId: string,
  metas: readonly FileMeta[],
  limits: ImageLimits,
): Promise<ChatCompletionContentPart[]> {
  const images = metas.filter(isUploadedImage);
  // Checked when the run was accepted; a run from before the limits changed shows none rather than fail at the provider.
  if (images.length === 0 || imageOverLimit(images, limits)) return [];
  const stored = await Promise.all(images.map((image) => files.get(runId, image.name)));
  return stored.flatMap((file) =>
    file
      ? [{ type: "image_url", image_url: { url: `data:${file.contentType};base64,${Buffer.from(file.body).toString("base64")}` } } as const]
      : [],
  );
}

/** A user message's content: the text, then the images (the text alone when there are none). */
export function withImages(text: string, images: readonly ChatCompletionContentPart[]): string | ChatCompletionContentPart[] {
  return images.length ? [{ type: "text", text }, ...images] : text;
}

/** Bytes of the images a conversation already shows (data URLs), against the per-request limit. */
function imageBytesIn(conversation: readonly ChatMessage[]): number {
  let bytes = 0;
  for (const message of conversation) {
    if (message.role !== "user" || typeof message.content === "string") continue;
    for (const part of message.content ?? []) {
      if (part.type !== "image_url") continue;
      const base64 = part.image_url.url.slice(part.image_url.url.indexOf(",") + 1);
      bytes += Math.floor((base64.length * 3) / 4) - (base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0);
    }
  }
  return bytes;
}

/**
 * The user message that shows a model that sees images the images its round's tool calls returned
 * (an MCP tool's screenshot), after their tool results; built the same way when a turn is replayed
 * from the journal (the outcomes name the files). Images over the limits (per image, and with those
 * the conversation shows already, per request) stay files, and the message says so.
 */
export async function toolImagesMessage(
  files: FileStore,
  runId: string,
  names: readonly string[],
  limits: ImageLimits,
  conversation: readonly ChatMessage[],
): Promise<ChatMessage | undefined> {
  if (names.length === 0) return undefined;
  let room = limits.imageRequestMaxBytes - imageBytesIn(conversation);
  const shown: string[] = [];
  const leftOut: string[] = [];
  const parts: ChatCompletionContentPart[] = [];
  for (const name of names) {
    const file = await files.get(runId, name);
    if (!file || !IMAGE_TYPES.has(file.contentType)) continue;
    const bytes = file.body.byteLength;
    if (bytes > limits.imageMaxBytes)
      leftOut.push(`${name} has ${bytes} bytes; a model sees images of at most ${limits.imageMaxBytes} bytes.`);
    else if (bytes > room)
      leftOut.push(`${name} (${bytes} bytes) would pass the ${limits.imageRequestMaxBytes} bytes of images one request may carry.`);
    else {
      room -= bytes;
      shown.push(name);
      parts.push({ type: "image_url", image_url: { url: `data:${file.contentType};base64,${Buffer.from(file.body).toString("base64")}` } });
    }
  }
  if (shown.length === 0 && leftOut.length === 0) return undefined;
  return { role: "user", content: [{ type: "text", text: toolImagesText(shown, leftOut) }, ...parts] };
}
