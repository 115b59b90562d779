/**
 * What the sandbox function's memory holds while a call runs, in MB: the parts add up to the
 * function's memory with a margin, so no setting can make the environment run out of memory (Lambda
 * then kills it, and the call fails as "the sandbox failed" rather than as the code's MemoryError).
 * The largest memory a call may ask for is derived from them here, once; the stack, the settings'
 * check and the sandbox's own request schema all read it.
 *
 * Measured locally (Node 20, Pyodide 0.27; RSS from /proc): a spare process with Pyodide loaded and
 * idle holds 168–176 MB; a process whose Python holds a 400 MB bytearray holds 553 MB (its
 * WebAssembly memory plus ~150 MB of Node and V8); the parent process ~90 MB.
 */
export const SANDBOX_MEMORY = {
  /** The sandbox function's memory. */
  functionMb: 2_048,
  /** The running call's V8 heap (--max-old-space-size): Pyodide's JavaScript side. */
  jsHeapMb: 256,
  /** The running call's Node process outside its heap and WebAssembly memory: code, stacks, buffers. */
  processBaseMb: 64,
  /** The warm spare: Pyodide loaded, no code run yet (measured 176 MB). */
  spareMb: 224,
  /** The handler's own process, with a request's files held as base64 and as bytes (measured ~90 MB). */
  parentMb: 192,
  /** Left free: Lambda's runtime, the page cache of the code, measurement error. */
  marginMb: 128,
} as const;

/** The most WebAssembly memory one call may have (`SANDBOX_MEMORY_MB`): what the other parts leave. */
export const MAX_SANDBOX_MEMORY_MB =
  SANDBOX_MEMORY.functionMb -
  SANDBOX_MEMORY.jsHeapMb -
  SANDBOX_MEMORY.processBaseMb -
  SANDBOX_MEMORY.spareMb -
  SANDBOX_MEMORY.parentMb -
  SANDBOX_MEMORY.marginMb;
