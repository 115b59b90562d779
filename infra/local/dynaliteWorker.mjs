// dynalite in a thread of its own: DynamoDB's request handling (parsing, validation, storage) then
// runs on another core than the handlers that call it, as DynamoDB runs apart from Lambda on AWS.
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";

const require = createRequire(import.meta.url);
const dynalite = require("dynalite");

const server = dynalite({ path: workerData.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.once("error", (error) => parentPort.postMessage({ type: "error", message: String(error?.message ?? error) }));
server.listen(workerData.port ?? 0, "127.0.0.1", () => parentPort.postMessage({ type: "listening", port: server.address().port }));

parentPort.on("message", (message) => {
  if (message !== "close") return;
  server.closeAllConnections?.();
  // dynalite closes its store with the server; then the thread has nothing left and ends.
  server.close(() => parentPort.postMessage({ type: "closed" }));
});
