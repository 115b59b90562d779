import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/**
 * The CLI as its own package (infra/cli/package.json): the command, the API client, the display
 * code and the contracts they use bundled into dist/stepwise.mjs; the npm packages it imports stay
 * imports, listed as the package's dependencies. `npm run pack:cli` builds it and packs the tarball.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
export const CLI_BUNDLE = path.join(here, "dist", "stepwise.mjs");

export async function buildCli(outfile = CLI_BUNDLE): Promise<string> {
  await build({
    entryPoints: [path.join(here, "command.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    banner: { js: "#!/usr/bin/env node" },
    legalComments: "none",
    logLevel: "silent",
  });
  return outfile;
}

/** The npm packages a bundle loads at run time (imports, dynamic imports and require calls), Node's own left out. */
export async function packagesLoadedBy(bundle: string): Promise<string[]> {
  const text = await readFile(bundle, "utf8");
  // A specifier has no white space: text such as `"Forked from")} ${…}` in a string is not one.
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\)\s*\(\s*|^import\s*)"([^".\s][^"\s]*)"/gm)].map(
    (m) => m[1] as string,
  );
  const names = specifiers
    .filter((s) => !s.startsWith("node:"))
    .map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : (s.split("/")[0] as string)));
  return [...new Set(names)].sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`Built ${path.relative(process.cwd(), await buildCli())}`);
