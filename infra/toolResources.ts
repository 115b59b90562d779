import { Duration, RemovalPolicy } from "aws-cdk-lib";
import type { IGrantable } from "aws-cdk-lib/aws-iam";
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods } from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";

export interface ToolResourcesProps {
  /** Days a run's files are kept: the same retention as the run's items in the table. */
  readonly retentionDays: number;
}

/** What the agents' tools need beyond the table: the files bucket. */
export class ToolResources extends Construct {
  readonly bucket: Bucket;
  /** Settings for every function that reads or writes files. */
  readonly environment: Record<string, string>;

  constructor(scope: Construct, id: string, props: ToolResourcesProps) {
    super(scope, id);
    this.bucket = new Bucket(this, "Files", {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: false,
      lifecycleRules: [
        { id: "run-retention", expiration: Duration.days(props.retentionDays) },
        { id: "abandoned-uploads", abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      // Presigned uploads and downloads from the console (same API, another origin on AWS).
      cors: [{ allowedMethods: [HttpMethods.GET, HttpMethods.PUT], allowedOrigins: ["*"], allowedHeaders: ["*"], maxAge: 3600 }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.environment = { FILES_BUCKET: this.bucket.bucketName, RETENTION_DAYS: String(props.retentionDays) };
  }

  /** Put, get and copy objects (CopyObject needs read on the source and write on the target). */
  grantFiles(grantee: IGrantable): void {
    this.bucket.grantReadWrite(grantee);
  }
}
