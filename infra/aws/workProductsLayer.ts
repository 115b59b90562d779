import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AssetHashType, DockerImage } from "aws-cdk-lib";
import { Architecture, Code, LayerVersion, Runtime } from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";
import { buildSync, version as esbuildVersion } from "esbuild";
import { installedVersion, LAYER_BINARIES_DIR, RESVG, resvgForLinuxArm64 } from "./layerBinaries.js";
import { layerHash } from "./layerHash.js";
import { REQUIRE_BANNER, WORK_PRODUCT_LIBRARIES } from "./stepwiseFunction.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(import.meta.url);
const FONT = "@expo-google-fonts/inter/400Regular/Inter_400Regular.ttf";

/**
 * The work products' libraries (documents, charts, slides) in one layer the agent functions share:
 * they ship once instead of in every agent function and stay out of its code (V8 would compile
 * them at every cold start). Each pure-JavaScript library is one prebuilt, minified ES module; the
 * PNG renderer is its package with the Linux arm64 binary (npm installs only the build machine's);
 * the charts' font is its file. Lambda puts the layer's nodejs/node_modules on NODE_PATH, where
 * shared/lazyImport.ts finds them on first use.
 */
export function workProductsLayer(scope: Construct, id: string): LayerVersion {
  return new LayerVersion(scope, id, {
    description:
      "Stepwise: the work products' libraries (exceljs, SheetJS, csv-parse, mammoth, unpdf, vega, vega-lite, pptxgenjs, resvg), the HTML readers (linkedom, Readability, Turndown) and the charts' font",
    compatibleRuntimes: [Runtime.NODEJS_22_X],
    compatibleArchitectures: [Architecture.ARM_64],
    // Built from the installed packages, not from a source folder: named by their versions, and by
    // the code that builds it (this file, the bundling banner, esbuild's version).
    code: Code.fromAsset(path.dirname(require.resolve(FONT)), {
      assetHashType: AssetHashType.CUSTOM,
      assetHash: layerHash([fileURLToPath(import.meta.url), fileURLToPath(new URL("./layerBinaries.ts", import.meta.url))], {
        versions: versions(),
        banner: REQUIRE_BANNER,
        esbuild: esbuildVersion,
      }),
      bundling: {
        image: DockerImage.fromRegistry("public.ecr.aws/docker/library/node:22"),
        local: {
          tryBundle(outputDir: string) {
            buildLayer(path.join(outputDir, "nodejs/node_modules"));
            return true;
          },
        },
      },
    }),
  });
}

/** Each library's installed version (and the font package's): what the layer is built from. */
function versions(): Record<string, string> {
  return Object.fromEntries([...WORK_PRODUCT_LIBRARIES, "@expo-google-fonts/inter"].map((name) => [name, installedVersion(name)]));
}

/** Builds the layer's node_modules into `modules` (also what a test uses to load the libraries as Lambda would). */
export function buildLayer(modules: string, binaries = LAYER_BINARIES_DIR): void {
  // Fetched at install time (layerBinaries.ts): synth reads it, or fails first, saying how to get it.
  const resvg = resvgForLinuxArm64(binaries);
  const work = mkdtempSync(path.join(tmpdir(), "stepwise-layer-"));
  try {
    for (const name of WORK_PRODUCT_LIBRARIES.filter((library) => library !== RESVG)) {
      const target = path.join(modules, name);
      mkdirSync(target, { recursive: true });
      // Re-exports the package as an ES module: its named exports, and a CommonJS package's default.
      const entry = path.join(work, `${name.replace(/\W/g, "_")}.mjs`);
      writeFileSync(entry, `export * from "${name}"; import * as all from "${name}"; export default all.default ?? all;\n`);
      buildSync({
        entryPoints: [entry],
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node22",
        minify: true,
        mainFields: ["module", "main"],
        nodePaths: [path.join(root, "node_modules")],
        banner: { js: REQUIRE_BANNER },
        outfile: path.join(target, "index.mjs"),
        logLevel: "error",
      });
      writeFileSync(path.join(target, "package.json"), JSON.stringify({ name, type: "module", exports: "./index.mjs" }));
    }
    cpSync(resvg, path.join(modules, "@resvg"), { recursive: true });
    const font = path.join(modules, FONT);
    mkdirSync(path.dirname(font), { recursive: true });
    cpSync(require.resolve(FONT), font);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
