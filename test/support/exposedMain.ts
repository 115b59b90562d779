/**
 * `npm start`'s entry point (infra/local/main.ts), unchanged, plus one more machine-readable line
 * with the endpoints the stack set up for its handlers: the local Step Functions and DynamoDB
 * endpoints. Tests that must look behind the HTTP API (the ASL the endpoint runs, what a bad
 * request left in the table) start the stack through this file.
 */
await import("../../infra/local/main.js");

console.log(
  JSON.stringify({
    endpoints: {
      sfn: process.env.AWS_ENDPOINT_URL_SFN,
      dynamodb: process.env.AWS_ENDPOINT_URL_DYNAMODB,
      stateMachineArn: process.env.STATE_MACHINE_ARN,
      tableName: process.env.TABLE_NAME,
      region: process.env.AWS_REGION,
    },
  }),
);
