// dynalite in a thread of its own: DynamoDB's request handling (parsing, validation, storage) then
// runs on another core than the handlers that call it, as DynamoDB runs apart from Lambda on AWS.
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";

const require = createRequire(import.meta.url);
const dynalite = require("dynalite");

// DynamoDB refuses a value nested more than 32 levels deep (31 maps or lists within each other
// around it), in items and in expression values; dynalite does not. Checked where dynalite
// validates those values, before its own (recursive) checks.
const validations = require("dynalite/validations");
const NESTING_MESSAGE = "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit";
function nestedTooDeep(value) {
  const pending = [[value, 1]];
  while (pending.length > 0) {
    const [current, level] = pending.pop();
    const children = current?.M ? Object.values(current.M) : current?.L;
    if (!Array.isArray(children)) continue;
    if (level >= 32) return true;
    for (const child of children) pending.push([child, level + 1]);
  }
  return false;
}
const { validateAttributeValue, validateExpressionParams } = validations;
validations.validateAttributeValue = (value) => (nestedTooDeep(value) ? NESTING_MESSAGE : validateAttributeValue(value));
validations.validateExpressionParams = (data, ...rest) =>
  Object.values(data.ExpressionAttributeValues ?? {}).some(nestedTooDeep) ? NESTING_MESSAGE : validateExpressionParams(data, ...rest);

const server = dynalite({ path: workerData.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.once("error", (error) => parentPort.postMessage({ type: "error", message: String(error?.message ?? error) }));
server.listen(workerData.port ?? 0, "127.0.0.1", () => parentPort.postMessage({ type: "listening", port: server.address().port }));

parentPort.on("message", (message) => {
  if (message !== "close") return;
  server.closeAllConnections?.();
  // dynalite closes its store with the server; then the thread has nothing left and ends.
  server.close(() => parentPort.postMessage({ type: "closed" }));
});
