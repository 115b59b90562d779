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
