import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

/**
 * The web console: a single-page app bundled by esbuild into infra/console/dist (index.html,
 * console.js, console.css), served by the API at `/`. Nothing is fetched from elsewhere at run time.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
export const CONSOLE_DIST = path.join(here, "dist");
const STATIC_FILES = ["index.html", "console.css", "favicon.svg"];
/** Every file the bundle was built from (its own, shared/ and packages), beside it but never served: what a rebuild watches. */
const INPUTS_FILE = ".inputs.json";

export async function buildConsole(outDir = CONSOLE_DIST): Promise<string> {
  // Build beside the target and swap files in by rename, so a server reading it never sees half a file.
  await mkdir(path.dirname(outDir), { recursive: true });
  const staging = await mkdtemp(path.join(path.dirname(outDir), ".console-"));
  try {
    const { metafile } = await build({
      entryPoints: [path.join(here, "src", "main.ts")],
      outfile: path.join(staging, "console.js"),
      bundle: true,
      format: "esm",
      target: ["chrome110", "firefox110", "safari16"],
      minify: true,
      sourcemap: false,
      legalComments: "none",
      logLevel: "silent",
      metafile: true,
    });
    const inputs = Object.keys(metafile.inputs).map((input) => path.relative(here, path.resolve(input)));
    await writeFile(path.join(staging, INPUTS_FILE), JSON.stringify(inputs));
    for (const file of STATIC_FILES) await copyFile(path.join(here, file), path.join(staging, file));
    await mkdir(outDir, { recursive: true });
    for (const file of await readdir(staging)) await rename(path.join(staging, file), path.join(outDir, file));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return outDir;
}

/** Builds the console unless the built copy is newer than every file it was built from (a file gone: rebuilt). */
export async function ensureConsoleBuilt(outDir = CONSOLE_DIST): Promise<string> {
  const built = await stat(path.join(outDir, "console.js")).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  const inputs = await readFile(path.join(outDir, INPUTS_FILE), "utf8").then(
    (text) => JSON.parse(text) as string[],
    () => undefined,
  );
  if (built === 0 || !inputs) return buildConsole(outDir);
  const sources = [...STATIC_FILES, ...inputs].map((f) => path.resolve(here, f));
  const newest = Math.max(
    ...(await Promise.all(
      sources.map((f) =>
        stat(f).then(
          (s) => s.mtimeMs,
          () => Number.POSITIVE_INFINITY,
        ),
      ),
    )),
  );
  return built > newest ? outDir : buildConsole(outDir);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const out = await buildConsole(process.argv[2] ? path.resolve(process.argv[2]) : CONSOLE_DIST);
  console.log(`console built in ${out}`);
}
