/**
 * Images a vision model is shown (role setting `vision`): the types OpenAI's models accept and the
 * size limits per image and per request. Plain values: the run's door checks them before a run is
 * accepted, the agents again before a request is sent.
 */
export const IMAGE_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/webp", "image/gif"]);

export interface ImageLimits {
  /** Bytes of one image. */
  imageMaxBytes: number;
  /** Bytes of all the images of one request. */
  imageRequestMaxBytes: number;
}

/** The first image over the limits, said so a person can act on it; undefined when they all fit. */
export function imageOverLimit(images: readonly { name: string; bytes: number }[], limits: ImageLimits): string | undefined {
  const big = images.find((image) => image.bytes > limits.imageMaxBytes);
  if (big) return `The image ${big.name} has ${big.bytes} bytes; a model sees images of at most ${limits.imageMaxBytes} bytes.`;
  const total = images.reduce((sum, image) => sum + image.bytes, 0);
  if (total > limits.imageRequestMaxBytes)
    return `The run's images have ${total} bytes together; a model sees at most ${limits.imageRequestMaxBytes} bytes of images per request.`;
  return undefined;
}
