// dynalite in a thread of its own: DynamoDB's request handling (parsing, validation, storage) then
// runs on another core than the handlers that call it, as DynamoDB runs apart from Lambda on AWS.
// Like DynamoDB it serves only requests signed with the stack's credentials (sigv4.mjs).
import { createRequire } from "node:module";
import { Readable } from "node:stream";
import { parentPort, workerData } from "node:worker_threads";
import { sigV4Refusal } from "./sigv4.mjs";

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
const [serve] = server.listeners("request");
server.removeAllListeners("request");
server.on("request", async (req, res) => {
  const chunks = [];
  try {
    for await (const chunk of req) chunks.push(chunk);
  } catch {
    return res.destroy();
  }
  const body = Buffer.concat(chunks);
  const refusal = await sigV4Refusal(req, body, workerData.credentials);
  if (refusal) {
    res.writeHead(400, { "content-type": "application/x-amz-json-1.0" });
    return res.end(JSON.stringify({ __type: "com.amazon.coral.service#UnrecognizedClientException", message: refusal }));
  }
  // dynalite reads the request as a stream: hand it the body it would have read.
  serve(Object.assign(Readable.from(body.length ? [body] : []), { headers: req.headers, method: req.method, url: req.url }), res);
});
server.once("error", (error) => parentPort.postMessage({ type: "error", message: String(error?.message ?? error) }));
server.listen(workerData.port ?? 0, "127.0.0.1", () => parentPort.postMessage({ type: "listening", port: server.address().port }));

parentPort.on("message", (message) => {
  if (message !== "close") return;
  server.closeAllConnections?.();
  // dynalite closes its store with the server; then the thread has nothing left and ends.
  server.close(() => parentPort.postMessage({ type: "closed" }));
});
