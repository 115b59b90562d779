import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AssetHashType, DockerImage } from "aws-cdk-lib";
import { Architecture, Code, LayerVersion, Runtime } from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";
import { layerHash } from "./layerHash.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The folder of an installed package. */
export const installedPackage = (name: string) => path.join(root, "node_modules", name);

export interface PackageLayerProps {
  /** The npm package the layer carries (its installed version names the layer's content). */
  packageName: string;
  description: string;
  /** The file that calls this (its code decides what is copied, so it is part of the hash). */
  builder: string;
  /** What else decides the content (the files taken), for the hash. */
  inputs?: Record<string, unknown>;
  /** Copies what the functions need of the package into `modules` (the layer's nodejs/node_modules). */
  copy(modules: string): void;
}

/**
 * An installed package's files, copied as they are into a layer at nodejs/node_modules, where
 * Lambda's NODE_PATH finds them: nothing to build, so no container is ever needed (the image is
 * only CDK's fallback). The asset is named by the package's version, the inputs and the code that
 * copies it, so a change to any of them publishes a new layer version.
 */
export function packageLayer(scope: Construct, id: string, props: PackageLayerProps): LayerVersion {
  const source = installedPackage(props.packageName);
  const version = (JSON.parse(readFileSync(path.join(source, "package.json"), "utf8")) as { version: string }).version;
  return new LayerVersion(scope, id, {
    description: props.description,
    compatibleRuntimes: [Runtime.NODEJS_22_X],
    compatibleArchitectures: [Architecture.ARM_64],
    code: Code.fromAsset(source, {
      assetHashType: AssetHashType.CUSTOM,
      assetHash: layerHash([props.builder, fileURLToPath(import.meta.url)], { version, ...props.inputs }),
      bundling: {
        image: DockerImage.fromRegistry("public.ecr.aws/docker/library/node:22"),
        local: {
          tryBundle(outputDir: string) {
            props.copy(path.join(outputDir, "nodejs/node_modules"));
            return true;
          },
        },
      },
    }),
  });
}
