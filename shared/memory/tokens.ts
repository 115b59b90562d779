import { createRequire } from "node:module";
import type { imageSize } from "image-size";
import type { TiktokenBPE } from "js-tiktoken/lite";
import type { ChatMessage } from "../llm/types.js";

/** Counts prompt tokens the way the model's tokenizer does. */
export interface TokenCounter {
  count(text: string): number;
  /** Tokens of a whole prompt: the messages plus the reply priming. Additive over messages. */
  countMessages(messages: ChatMessage[]): number;
  /** At least countMessages, without tokenizing: each text counted as its UTF-8 bytes (a token is at least one byte). */
  atMost(messages: ChatMessage[]): number;
}

export type EncodingName = "o200k_base" | "cl100k_base";

/**
 * Which tokenizer each model family uses; first match wins. Everything else (gpt-4o, gpt-4.1,
 * gpt-4.5, gpt-5, o-series, and non-OpenAI models, for which o200k is the closest estimate we ship)
 * falls back to DEFAULT_ENCODING.
 */
const MODEL_ENCODINGS: ReadonlyArray<readonly [pattern: RegExp, encoding: EncodingName]> = [
  [/^(gpt-4o|chatgpt-4o|gpt-4\.\d|gpt-5|o\d)/, "o200k_base"],
  [/^(gpt-4($|-)|gpt-3\.5|gpt-35|text-embedding-(ada-002|3))/, "cl100k_base"],
];
const DEFAULT_ENCODING: EncodingName = "o200k_base";

// OpenAI's counting rules (cookbook "How to count tokens with tiktoken", verified there against the API).
const TOKENS_PER_MESSAGE = 3; // <|start|>{role}<|message|>…<|end|>
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING_TOKENS = 3; // <|start|>assistant<|message|>
/** An image at detail "low", or one whose pixels cannot be read (a web address): OpenAI's base cost. */
const IMAGE_BASE_TOKENS = 85;
/** Each 512-pixel tile of an image at detail "high" or "auto" (OpenAI's vision guide). */
const IMAGE_TILE_TOKENS = 170;
/** Other non-text parts (audio, files): an estimate. */
const NON_TEXT_PART_TOKENS = 85;

/**
 * What the counter loads when it first needs it, resolved at run time so bundlers leave it out of
 * the bundle: on AWS it ships once, in the agent functions' tokenizer layer (infra/aws/tokenizerLayer.ts).
 */
const requireAtFirstUse = createRequire(import.meta.url);

/** A rank table (1-2 MB of text), read when the first count needs it rather than parsed with the code at start. */
const ranksOf = (name: EncodingName): TiktokenBPE => requireAtFirstUse(`js-tiktoken/ranks/${name}`) as TiktokenBPE;

/** image-size's reader (27 KB of code), required on the first image rather than imported: most runs send no image. */
const readImageSize = () => (requireAtFirstUse("image-size") as { imageSize: typeof imageSize }).imageSize;

/** The tokenizer of a model; a provider prefix is ignored ("openai/gpt-4o" → "gpt-4o"). */
export function encodingForModel(model: string): EncodingName {
  const name = model.toLowerCase().slice(model.lastIndexOf("/") + 1);
  return MODEL_ENCODINGS.find(([pattern]) => pattern.test(name))?.[1] ?? DEFAULT_ENCODING;
}

/** One shared counter per encoding; its rank table is built on the first count. */
export function tokenCounterFor(model: string): TokenCounter {
  return counterFor(encodingForModel(model));
}

const counters = new Map<EncodingName, TokenCounter>();
/** Texts at least this long have their count remembered, the last MEMO_ENTRIES of them. */
const MEMO_MIN_CHARS = 200;
const MEMO_ENTRIES = 2_000;

function counterFor(name: EncodingName): TokenCounter {
  let counter = counters.get(name);
  if (!counter) {
    // Building the rank table takes 0.2-0.4 s, so it happens on the first count, not at import.
    let encoding: Encoding | undefined;
    const countNow = (text: string) => {
      encoding ??= loadEncoding(ranksOf(name));
      return countTokens(encoding, text);
    };
    const counted = new Map<string, number>();
    const count = (text: string) => {
      // Prompts repeat their long parts every round (system prompt, the task, earlier turns): count each once.
      if (text.length < MEMO_MIN_CHARS) return countNow(text);
      let tokens = counted.get(text);
      if (tokens === undefined) {
        tokens = countNow(text);
        if (counted.size >= MEMO_ENTRIES) {
          const [oldest] = counted.keys(); // a Map keeps insertion order
          counted.delete(oldest);
        }
        counted.set(text, tokens);
      }
      return tokens;
    };
    counter = {
      count,
      countMessages: (messages) => countMessageTokens(messages, count),
      atMost: (messages) => countMessageTokens(messages, utf8Bytes),
    };
    counters.set(name, counter);
  }
  return counter;
}

const utf8Bytes = (text: string) => Buffer.byteLength(text, "utf8");

function countMessageTokens(messages: ChatMessage[], count: (text: string) => number): number {
  let total = REPLY_PRIMING_TOKENS;
  for (const message of messages) {
    total += TOKENS_PER_MESSAGE + count(message.role) + contentTokens(message.content, count);
    if ("name" in message && message.name) total += TOKENS_PER_NAME + count(message.name);
    if (message.role !== "assistant") continue;
    if (message.refusal) total += count(message.refusal);
    if (message.function_call) total += count(message.function_call.name) + count(message.function_call.arguments);
    // Tool call ids never reach the model's tokens; the call is its name and arguments.
    for (const call of message.tool_calls ?? []) {
      total +=
        call.type === "function"
          ? count(call.function.name) + count(call.function.arguments)
          : count(call.custom.name) + count(call.custom.input);
    }
  }
  return total;
}

type Content = ChatMessage["content"];

function contentTokens(content: Content, count: (text: string) => number): number {
  if (content == null) return 0;
  if (typeof content === "string") return count(content);
  let total = 0;
  for (const part of content) {
    if (part.type === "text") total += count(part.text);
    else if (part.type === "refusal") total += count(part.refusal);
    else if (part.type === "image_url") total += imageTokens(part.image_url);
    else total += NON_TEXT_PART_TOKENS;
  }
  return total;
}

/** Counted once per image: a prompt repeats the same parts every round. */
const imageCounts = new WeakMap<object, number>();

/**
 * OpenAI's count for an image (its vision guide): 85 at detail "low"; otherwise the image is fitted
 * within 2048×2048, then its shorter side brought down to 768, and each 512-pixel tile costs 170
 * more. The pixels are read from a data URL's bytes; a web address counts as detail "low".
 */
export function imageTokens(image: { url: string; detail?: "auto" | "low" | "high" }): number {
  let tokens = imageCounts.get(image);
  if (tokens !== undefined) return tokens;
  const size = image.detail === "low" ? undefined : pixelsOf(image.url);
  tokens = size ? IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * tilesOf(size.width, size.height) : IMAGE_BASE_TOKENS;
  imageCounts.set(image, tokens);
  return tokens;
}

function tilesOf(width: number, height: number): number {
  const fit = Math.min(1, 2048 / Math.max(width, height));
  let [w, h] = [width * fit, height * fit];
  const shorter = Math.min(1, 768 / Math.min(w, h));
  [w, h] = [w * shorter, h * shorter];
  return Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** An image's width and height from a base64 data URL, or undefined when they cannot be read. */
function pixelsOf(url: string): { width: number; height: number } | undefined {
  const data = /^data:image\/[\w.+-]+;base64,/.exec(url);
  if (!data) return undefined;
  const read = readImageSize(); // outside the try: a missing reader is a broken deployment, not an unreadable image
  try {
    const { width, height } = read(Buffer.from(url.slice(data[0].length), "base64"));
    return width && height ? { width, height } : undefined;
  } catch {
    return undefined;
  }
}

// --- Byte-pair encoding over js-tiktoken's bundled rank tables (nothing is downloaded). ---
// We count with our own merge loop rather than js-tiktoken's `encode`: its merge re-joins byte
// arrays into strings on every step, which takes ~90 s for 10,000 Chinese characters.

interface Encoding {
  pattern: RegExp;
  /** Token bytes as a latin1 string ("binary string") → rank. */
  ranks: Map<string, number>;
}

function loadEncoding(bpe: TiktokenBPE): Encoding {
  const ranks = new Map<string, number>();
  // Same layout js-tiktoken parses: lines of "<label> <first rank> <base64 token> <base64 token> …".
  for (const line of bpe.bpe_ranks.split("\n")) {
    if (!line) continue;
    const [, first, ...tokens] = line.split(" ");
    let rank = Number.parseInt(first, 10);
    for (const token of tokens) ranks.set(Buffer.from(token, "base64").toString("latin1"), rank++);
  }
  return { pattern: new RegExp(bpe.pat_str, "gu"), ranks };
}

/** Special-token text such as "<|endoftext|>" counts as plain text: message text cannot inject them. */
function countTokens(encoding: Encoding, text: string): number {
  let total = 0;
  for (const [piece] of text.matchAll(encoding.pattern)) {
    const bytes = Buffer.from(piece, "utf8").toString("latin1");
    total += encoding.ranks.has(bytes) ? 1 : mergedLength(bytes, encoding.ranks);
  }
  return total;
}

/**
 * How many tokens byte-pair merging leaves of `piece`: repeatedly merge the adjacent pair of lowest
 * rank, leftmost on ties, exactly as tiktoken does. A heap keeps this O(n log n): one regex piece
 * can be a whole paragraph of Chinese (no spaces) or a base64 blob of thousands of bytes.
 */
function mergedLength(piece: string, ranks: Map<string, number>): number {
  const n = piece.length;
  // Parts form a linked list over byte offsets: the part starting at s ends at next[s].
  const next = Int32Array.from({ length: n + 1 }, (_, i) => i + 1);
  const prev = Int32Array.from({ length: n + 1 }, (_, i) => i - 1);
  const alive = new Uint8Array(n).fill(1);
  // pairRank[s]: rank of the part at s merged with the part after it (Infinity if not a token).
  const pairRank = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
  const heap = new MinHeap();
  // Heap keys order by rank, then by position; a key stays valid while pairRank[s] still equals its rank.
  const key = (rank: number, s: number) => rank * (n + 1) + s;
  const updatePair = (s: number) => {
    const right = next[s];
    pairRank[s] = right < n ? (ranks.get(piece.slice(s, next[right])) ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY;
    if (pairRank[s] !== Number.POSITIVE_INFINITY) heap.push(key(pairRank[s], s));
  };
  for (let s = 0; s < n - 1; s++) updatePair(s);
  let parts = n;
  while (heap.size > 0) {
    const k = heap.pop();
    const s = k % (n + 1);
    const rank = (k - s) / (n + 1);
    if (!alive[s] || pairRank[s] !== rank) continue; // stale: one of the two parts has changed since
    const absorbed = next[s];
    alive[absorbed] = 0;
    next[s] = next[absorbed];
    prev[next[s]] = s;
    parts--;
    updatePair(s);
    if (s > 0) updatePair(prev[s]);
  }
  return parts;
}

/** A binary min-heap of numbers. */
class MinHeap {
  private readonly items: number[] = [];

  get size(): number {
    return this.items.length;
  }

  push(value: number): void {
    const items = this.items;
    let i = items.push(value) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent] <= value) break;
      items[i] = items[parent];
      i = parent;
    }
    items[i] = value;
  }

  pop(): number {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (last === undefined) throw new RangeError("pop() on an empty heap");
    if (items.length > 0) {
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= items.length) break;
        if (child + 1 < items.length && items[child + 1] < items[child]) child++;
        if (items[child] >= last) break;
        items[i] = items[child];
        i = child;
      }
      items[i] = last;
    }
    return top;
  }
}
