/**
 * Webhook URLs come from users and are called from inside our network: refuse any URL that reaches
 * something that is not the public internet (private networks, the cloud metadata service, ...).
 * Every address the host resolves to must be public, and the caller pins the connection to the
 * returned addresses so that a second DNS answer (DNS rebinding) cannot redirect it.
 */
import type { LookupFunction } from "node:net";
import { BadRequestError } from "../errors.js";

export interface ResolvedAddress {
  address: string;
  family: number;
}

export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export interface DeliverableUrlOptions {
  /** Local development and tests deliver to 127.0.0.0/8 and ::1. Never in production. */
  allowLoopback: boolean;
  allowHttp: boolean;
  lookup?: HostLookup;
}

/** `code` tells a caller what to do: fix the URL, or (`webhook_host_unresolvable`) maybe retry later. */
export class WebhookUrlError extends BadRequestError {
  constructor(message: string, code: "invalid_webhook_url" | "forbidden_webhook_address" | "webhook_host_unresolvable") {
    super(message, undefined, code);
  }
}

/**
 * node:net's address check and node:dns's lookup, with the modules taken as built-ins on first use
 * (as httpRequest.ts takes node:http): imported, the two cost a cold start about 4 ms on Node 22,
 * and most invocations of the functions that import this guard never check a URL.
 */
const isIP = (text: string) => process.getBuiltinModule("node:net").isIP(text);
const systemLookup: HostLookup = (hostname) => process.getBuiltinModule("node:dns/promises").lookup(hostname, { all: true });

/** Checks the URL and every address its host resolves to; returns those vetted addresses. */
export async function assertDeliverableUrl(url: string, options: DeliverableUrlOptions): Promise<ResolvedAddress[]> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WebhookUrlError(`webhook URL '${url}' is not a valid absolute URL`, "invalid_webhook_url");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new WebhookUrlError(`webhook URL must use https, not '${parsed.protocol.slice(0, -1)}'`, "invalid_webhook_url");
  }
  if (parsed.protocol === "http:" && !options.allowHttp) {
    throw new WebhookUrlError("webhook URL must use https", "invalid_webhook_url");
  }
  if (parsed.username || parsed.password) {
    throw new WebhookUrlError(
      "webhook URL must not contain credentials (user:password@); authenticate with the webhook signature",
      "invalid_webhook_url",
    );
  }

  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host, options.lookup ?? systemLookup);
  for (const { address } of addresses) {
    const reason = forbiddenAddressReason(address);
    if (reason && !(options.allowLoopback && reason === LOOPBACK)) {
      const target = address === host ? `webhook URL points to ${address}` : `webhook host '${host}' resolves to ${address}`;
      throw new WebhookUrlError(`${target}, which is not a public internet address (${reason})`, "forbidden_webhook_address");
    }
  }
  return addresses;
}

async function resolve(host: string, lookup: HostLookup): Promise<ResolvedAddress[]> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await lookup(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new WebhookUrlError(`webhook host '${host}' cannot be resolved (${code})`, "webhook_host_unresolvable");
  }
  if (addresses.length === 0) throw new WebhookUrlError(`webhook host '${host}' has no address`, "webhook_host_unresolvable");
  return addresses;
}

const LOOPBACK = "loopback";

/** Why an IP address is not a public internet address, or undefined when it is one. */
export function forbiddenAddressReason(address: string): string | undefined {
  const { IPV4_RANGES, IPV6_RANGES, IPV4_EMBEDDINGS, GLOBAL_UNICAST } = specialRanges();
  const ipv4 = parseIPv4(address);
  if (ipv4) return matchRange(IPV4_RANGES, ipv4);
  const ipv6 = parseIPv6(address);
  if (!ipv6) return "malformed";

  // Addresses that carry an IPv4 address are judged by it: they reach that IPv4 host.
  for (const { range, offset, name } of IPV4_EMBEDDINGS) {
    if (inRange(range, ipv6)) {
      const reason = matchRange(IPV4_RANGES, ipv6.slice(offset, offset + 4));
      return reason && `${reason}, ${name}`;
    }
  }
  const reason = matchRange(IPV6_RANGES, ipv6);
  if (reason) return reason;
  return inRange(GLOBAL_UNICAST, ipv6) ? undefined : "reserved: outside global unicast 2000::/3";
}

interface Range {
  bytes: number[];
  bits: number;
  name: string;
}

// IANA special-purpose registries; the more specific ranges come first for clearer messages.
const IPV4_ROWS = [
  ["169.254.169.254/32", "cloud metadata service"],
  ["0.0.0.0/8", 'unspecified ("this network")'],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "carrier-grade NAT (shared)"],
  ["127.0.0.0/8", LOOPBACK],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "IETF protocol assignment"],
  ["192.0.2.0/24", "documentation"],
  ["192.88.99.0/24", "6to4 relay anycast"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "benchmarking"],
  ["198.51.100.0/24", "documentation"],
  ["203.0.113.0/24", "documentation"],
  ["224.0.0.0/4", "multicast"],
  ["255.255.255.255/32", "broadcast"],
  ["240.0.0.0/4", "reserved"],
] as const;

// Everything outside 2000::/3 is refused anyway; these get a name, or sit inside 2000::/3.
const IPV6_ROWS = [
  ["::/128", "unspecified"],
  ["::1/128", LOOPBACK],
  ["::/96", "IPv4-compatible (deprecated)"],
  ["64:ff9b:1::/48", "local-use NAT64"],
  ["100::/64", "discard-only"],
  ["fd00:ec2::254/128", "cloud metadata service"],
  ["fc00::/7", "unique local"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "site-local (deprecated)"],
  ["ff00::/8", "multicast"],
  ["2001::/23", "IETF protocol assignment (Teredo, benchmarking, ORCHID)"],
  ["2001:db8::/32", "documentation"],
  ["3fff::/20", "documentation"],
] as const;

let parsed: ReturnType<typeof parseRanges> | undefined;

/**
 * The ranges, parsed on the first check, not at import: Node's address check compiles its large
 * IPv6 pattern on first use, some 25 ms that a cold start of every handler would otherwise pay.
 */
function specialRanges() {
  parsed ??= parseRanges();
  return parsed;
}

function parseRanges() {
  return {
    IPV4_RANGES: rangeTable(IPV4_ROWS),
    IPV6_RANGES: rangeTable(IPV6_ROWS),
    IPV4_EMBEDDINGS: [
      { range: range("::ffff:0:0/96", ""), offset: 12, name: "IPv4-mapped" },
      { range: range("64:ff9b::/96", ""), offset: 12, name: "via NAT64" },
      { range: range("2002::/16", ""), offset: 2, name: "via 6to4" },
    ],
    GLOBAL_UNICAST: range("2000::/3", ""),
  };
}

function rangeTable(rows: ReadonlyArray<readonly [cidr: string, name: string]>): Range[] {
  return rows.map(([cidr, name]) => range(cidr, name));
}

function range(cidr: string, name: string): Range {
  const [address, bits] = cidr.split("/") as [string, string];
  const bytes = parseIPv4(address) ?? parseIPv6(address);
  if (!bytes) throw new Error(`bad range ${cidr}`);
  return { bytes, bits: Number(bits), name };
}

function matchRange(ranges: Range[], bytes: number[]): string | undefined {
  return ranges.find((r) => r.bytes.length === bytes.length && inRange(r, bytes))?.name;
}

function inRange({ bytes: prefix, bits }: Range, bytes: number[]): boolean {
  for (let i = 0; i * 8 < bits; i++) {
    const maskBits = Math.min(8, bits - i * 8);
    const mask = (0xff << (8 - maskBits)) & 0xff;
    if (((prefix[i] ?? 0) & mask) !== ((bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

function parseIPv4(text: string): number[] | undefined {
  return isIP(text) === 4 ? text.split(".").map(Number) : undefined;
}

/** 16 bytes of a valid IPv6 address ("::" shorthand, embedded dotted IPv4 and zone ids included). */
function parseIPv6(text: string): number[] | undefined {
  if (isIP(text) !== 6) return undefined;
  let address = text.split("%")[0];
  let tail: number[] = [];
  if (address.includes(".")) {
    const cut = address.lastIndexOf(":") + 1;
    tail = address.slice(cut).split(".").map(Number);
    address = `${address.slice(0, cut)}0:0`;
  }
  const [left, right] = address.split("::") as [string, string | undefined];
  const leftGroups = left ? left.split(":") : [];
  const rightGroups = right ? right.split(":") : [];
  const zeros = right === undefined ? [] : Array<string>(8 - leftGroups.length - rightGroups.length).fill("0");
  const bytes = [...leftGroups, ...zeros, ...rightGroups].flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** A DNS lookup that answers only with the vetted addresses. */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
    const usable = addresses.filter((a) => !family || a.family === family).map(({ address, family }) => ({ address, family }));
    const first = usable[0];
    if (!first) {
      callback(Object.assign(new Error(`no vetted address for ${hostname}`), { code: "ENOTFOUND" }), "", 0);
    } else if (options.all) {
      callback(null, usable);
    } else {
      callback(null, first.address, first.family);
    }
  };
}
