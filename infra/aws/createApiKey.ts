import { parseArgs } from "node:util";
import { connectTable } from "../../functions/awsClients.js";
import { newApiKey } from "../../shared/ports/apiKeys.js";
import { ApiKeyStore } from "../../shared/store/apiKeys.js";

/**
 * `npm run create-api-key -- --tenant acme --table <TableName>`: registers a new API key for a
 * tenant in a deployed stack's table (uses your AWS credentials) and prints it once. Only its
 * SHA-256 hash is stored.
 */
const { values } = parseArgs({ options: { tenant: { type: "string" }, table: { type: "string" }, region: { type: "string" } } });
const table = values.table ?? process.env.TABLE_NAME;
if (!values.tenant || !/^[\w-]{1,64}$/.test(values.tenant) || !table) {
  console.error(
    "usage: npm run create-api-key -- --tenant <tenant id: letters, digits, _ or -> --table <TableName output of the stack> [--region eu-west-1]",
  );
  process.exit(2);
}
const key = newApiKey();
await new ApiKeyStore(connectTable(table, values.region ? { region: values.region } : {})).register(key, values.tenant);
console.log(key);
