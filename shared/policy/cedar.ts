import { lazyImport } from "../lazyImport.js";

/** The official Cedar engine (WebAssembly), loaded on first use: a tenant without policies never loads it. */
export type Cedar = typeof import("@cedar-policy/cedar-wasm/nodejs");

let loaded: Promise<Cedar> | undefined;

export function cedar(): Promise<Cedar> {
  loaded ??= lazyImport(() => import("@cedar-policy/cedar-wasm/nodejs"), "@cedar-policy/cedar-wasm/nodejs").then(
    // A CommonJS module: its functions may come as the default export.
    (module) => ((module as { default?: Cedar }).default ?? module) as Cedar,
  );
  return loaded;
}
