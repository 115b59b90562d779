/** Who an event's text belongs to: an agent, and the task when an executor speaks. */
export interface TextSource {
  agent: string;
  taskId?: string;
}

/** The text an agent streamed since it last did something else, and the client's view of it. */
export interface TextBlock<View> {
  source: TextSource;
  text: string;
  view: View;
}

/**
 * An agent's words arrive twice when its model streams: piece by piece as `agent.delta`, then
 * whole as `agent.thought`. This keeps, per agent, the text streamed since it last did something
 * else (its block), so a client shows the words once: the deltas as they come, and a thought only
 * when it ends no block (a model that does not stream). Reasoning pieces (`agent.reasoning`) are
 * blocks the same way. Each block has a view of the client's choosing (the console's element).
 */
export class StreamedText<View = undefined> {
  private readonly blocks = new Map<string, TextBlock<View>>();

  /** A piece of text: its block with the piece added; `open` makes the view when the piece starts a block. */
  add(source: TextSource, piece: string, open: () => View): TextBlock<View> {
    const key = keyOf(source);
    const block = this.blocks.get(key) ?? { source, text: "", view: open() };
    block.text += piece;
    this.blocks.set(key, block);
    return block;
  }

  /**
   * The agent did something else (an `agent.thought` included): its block ends. Returns the block,
   * if there was one; a thought that ends a block repeats it and adds nothing.
   */
  end(source: TextSource): TextBlock<View> | undefined {
    const key = keyOf(source);
    const block = this.blocks.get(key);
    this.blocks.delete(key);
    return block;
  }

  /** The blocks still open, in the order they started. */
  open(): TextBlock<View>[] {
    return [...this.blocks.values()];
  }
}

/** The source of an event's data, for events that name an agent. */
export function textSource(data: unknown): TextSource | undefined {
  const agent = (data as { agent?: unknown } | null | undefined)?.agent;
  return typeof agent === "string" ? (data as TextSource) : undefined;
}

/** One key per agent and task: two executors' texts never mix. */
export const sourceKey = (source: TextSource) => `${source.agent}:${source.taskId ?? ""}`;
const keyOf = sourceKey;
