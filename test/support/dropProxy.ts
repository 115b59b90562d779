import type { AddressInfo } from "node:net";
import { connect, createServer, type Socket } from "node:net";

/**
 * A TCP proxy in front of the local stack that can cut every open connection at once: a real
 * network drop, as a browser sees it. Counts the stream requests that pass through it.
 */
export async function startDropProxy(
  target: string,
): Promise<{ url: string; streamRequests(): number; dropAll(): void; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let streams = 0;
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    client.on("data", (chunk) => {
      streams += (String(chunk).match(/^GET \/v1\/runs\/[^ ]+\/stream[? ]/gm) ?? []).length;
    });
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    streamRequests: () => streams,
    dropAll,
    close: () =>
      new Promise((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
