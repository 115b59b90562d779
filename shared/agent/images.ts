// Images for models that see them (role setting `vision`): a run's uploaded images reach the model
// as Chat Completions `image_url` parts holding data URLs, within a size limit per image and per
// request. For other models they stay files, and the prompt says so.

import type { ChatCompletionContentPart } from "openai/resources/chat/completions";
import { IMAGE_TYPES, type ImageLimits, imageOverLimit } from "../contracts/imageLimits.js";
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
