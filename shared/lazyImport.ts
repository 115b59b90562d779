import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

/**
 * A library loaded on first use (`load` is its `import()`, typed). On AWS the agent functions find
 * the work-product libraries in a layer (/opt/nodejs/node_modules), which Node's ES module
 * resolution does not search: only require() reads NODE_PATH, where Lambda puts the layer. When
 * the import does not find the package, it is resolved as require() would and imported from there.
 */
export async function lazyImport<T>(load: () => Promise<T>, name: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    return (await import(pathToFileURL(createRequire(import.meta.url).resolve(name)).href)) as T;
  }
}

/** A port whose members are all async methods: what `onFirstCall` can stand in for. */
type AsyncMethods<T> = { [K in keyof T]: (...args: never[]) => Promise<unknown> };

/**
 * A port whose adapter is loaded on its first call: `load` imports the adapter's module with
 * `import()` and builds it (once; again after a failed load), and each method named waits for it,
 * then calls it. What `import()` loads is a chunk of its own in the function's bundle (esbuild),
 * so an adapter and its SDK client cost a cold start nothing, and a request that never calls the
 * port never loads them. `methods` names every method (a missing one fails to compile).
 */
export function onFirstCall<T extends AsyncMethods<T>>(methods: { readonly [K in keyof T]: true }, load: () => Promise<T>): T {
  const loaded = loadOnce(load);
  const port = {} as Record<keyof T, (...args: unknown[]) => Promise<unknown>>;
  for (const name of Object.keys(methods) as (keyof T)[])
    port[name] = async (...args) => {
      const ready = await loaded();
      return (ready[name] as unknown as (...args: unknown[]) => Promise<unknown>).apply(ready, args);
    };
  return port as unknown as T;
}

/** What `load` gives, loaded on the first call and then kept; a failed load is tried again on the next call. */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () =>
    (loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    }));
}
