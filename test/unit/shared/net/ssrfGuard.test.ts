import { describe, expect, it } from "vitest";
import {
  assertDeliverableUrl,
  type DeliverableUrlOptions,
  forbiddenAddressReason,
  type HostLookup,
  WebhookUrlError,
} from "../../../../shared/net/ssrfGuard.js";

const STRICT: DeliverableUrlOptions = { allowLoopback: false, allowHttp: false };
const LOCAL_DEV: DeliverableUrlOptions = { allowLoopback: true, allowHttp: true };

/** A DNS that knows a few names and fails the test if asked about anything else. */
function fakeDns(records: Record<string, string[]>): HostLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (hostname: string) => {
    asked.push(hostname);
    const addresses = records[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { asked });
}

describe("forbiddenAddressReason", () => {
  it.each([
    // IPv4
    ["0.0.0.0", /unspecified/],
    ["0.1.2.3", /this network/],
    ["10.0.0.1", /private/],
    ["10.255.255.255", /private/],
    ["100.64.0.1", /carrier-grade NAT/],
    ["100.127.255.254", /carrier-grade NAT/],
    ["127.0.0.1", /loopback/],
    ["127.255.0.9", /loopback/],
    ["169.254.169.254", /cloud metadata/],
    ["169.254.169.253", /link-local/],
    ["169.254.0.1", /link-local/],
    ["172.16.0.1", /private/],
    ["172.31.255.255", /private/],
    ["192.0.0.8", /IETF/],
    ["192.0.2.10", /documentation/],
    ["192.88.99.1", /6to4 relay/],
    ["192.168.1.1", /private/],
    ["198.18.0.1", /benchmarking/],
    ["198.19.255.255", /benchmarking/],
    ["198.51.100.7", /documentation/],
    ["203.0.113.200", /documentation/],
    ["224.0.0.1", /multicast/],
    ["239.255.255.250", /multicast/],
    ["240.0.0.1", /reserved/],
    ["255.255.255.255", /broadcast/],
    // IPv6
    ["::", /unspecified/],
    ["::1", /loopback/],
    ["0:0:0:0:0:0:0:1", /loopback/],
    ["::127.0.0.1", /IPv4-compatible/],
    ["fd00:ec2::254", /cloud metadata/],
    ["fc00::1", /unique local/],
    ["fdff:ffff::1", /unique local/],
    ["fe80::1", /link-local/],
    ["fe80::1%eth0", /link-local/],
    ["febf::1", /link-local/],
    ["fec0::1", /site-local/],
    ["ff02::1", /multicast/],
    ["100::1", /discard/],
    ["2001:db8::1", /documentation/],
    ["3fff:1::1", /documentation/],
    ["2001::1", /Teredo/],
    ["2001:2::1", /benchmarking/],
    ["64:ff9b:1::a00:1", /local-use NAT64/],
    ["5f00::1", /outside global unicast/],
    ["4000::1", /outside global unicast/],
    // IPv6 carrying a forbidden IPv4
    ["::ffff:127.0.0.1", /loopback, IPv4-mapped/],
    ["::ffff:7f00:1", /loopback, IPv4-mapped/],
    ["::ffff:10.0.0.1", /private, IPv4-mapped/],
    ["::ffff:169.254.169.254", /cloud metadata service, IPv4-mapped/],
    ["0:0:0:0:0:ffff:a9fe:a9fe", /cloud metadata service, IPv4-mapped/],
    ["::ffff:0.0.0.0", /unspecified/],
    ["64:ff9b::10.0.0.1", /private, via NAT64/],
    ["64:ff9b::a9fe:a9fe", /cloud metadata service, via NAT64/],
    ["2002:c0a8:0101::1", /private, via 6to4/],
    ["2002:7f00:1::", /loopback, via 6to4/],
    // not an IP at all
    ["example.com", /malformed/],
  ])("%s is forbidden (%s)", (address, reason) => {
    expect(forbiddenAddressReason(address)).toMatch(reason);
  });

  it.each([
    "1.1.1.1",
    "8.8.8.8",
    "9.255.255.255",
    "11.0.0.1",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.169.0.1",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.254",
    "2606:4700:4700::1111",
    "2a00:1450:4001:82b::200e",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:0808:0808::1",
  ])("%s is a public address", (address) => {
    expect(forbiddenAddressReason(address)).toBeUndefined();
  });
});

describe("assertDeliverableUrl", () => {
  it("returns the vetted addresses of a public host, all of them", async () => {
    const lookup = fakeDns({ "hooks.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"] });
    await expect(assertDeliverableUrl("https://hooks.example.com/stepwise?x=1", { ...STRICT, lookup })).resolves.toEqual([
      { address: "93.184.216.34", family: 4 },
      { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 },
    ]);
    expect(lookup.asked).toEqual(["hooks.example.com"]);
  });

  it.each([
    ["one private address among public ones", ["93.184.216.34", "10.0.0.7"], /resolves to 10\.0\.0\.7.*private/],
    ["an IPv6 loopback among public ones", ["2606:4700::1111", "::1"], /resolves to ::1.*loopback/],
    ["the metadata service", ["169.254.169.254"], /cloud metadata/],
    ["an IPv4-mapped private address", ["::ffff:192.168.0.1"], /private, IPv4-mapped/],
  ])("rejects a host that resolves to %s", async (_, addresses, message) => {
    const lookup = fakeDns({ "rebind.example.com": addresses });
    const attempt = assertDeliverableUrl("https://rebind.example.com/hook", { ...STRICT, lookup });
    await expect(attempt).rejects.toThrow(WebhookUrlError);
    await expect(attempt).rejects.toThrow(message);
    await expect(attempt).rejects.toMatchObject({ code: "forbidden_webhook_address", statusCode: 400 });
  });

  it.each([
    ["https://127.0.0.1/", /127\.0\.0\.1.*loopback/],
    ["https://[::1]:8443/", /::1.*loopback/],
    ["https://10.1.2.3/", /private/],
    ["https://169.254.169.254/latest/meta-data/", /cloud metadata/],
    ["https://[fd00:ec2::254]/", /cloud metadata/],
    ["https://[::ffff:127.0.0.1]/", /loopback, IPv4-mapped/],
    ["https://[::ffff:a9fe:a9fe]/", /cloud metadata service, IPv4-mapped/],
    ["https://[fe80::1]/", /link-local/],
    ["https://0.0.0.0/", /unspecified/],
    // The URL parser reads these as IPv4: the check sees the real address.
    ["https://2130706433/", /127\.0\.0\.1.*loopback/],
    ["https://0x7f.1/", /127\.0\.0\.1.*loopback/],
    ["https://0177.0.0.1/", /127\.0\.0\.1.*loopback/],
    ["https://10.1/", /10\.0\.0\.1.*private/],
  ])("rejects the literal address in %s without asking DNS", async (url, message) => {
    const lookup = fakeDns({});
    await expect(assertDeliverableUrl(url, { ...STRICT, lookup })).rejects.toThrow(message);
    expect(lookup.asked).toEqual([]);
  });

  it("accepts a public literal address without asking DNS", async () => {
    const lookup = fakeDns({});
    await expect(assertDeliverableUrl("https://1.1.1.1/hook", { ...STRICT, lookup })).resolves.toEqual([{ address: "1.1.1.1", family: 4 }]);
    await expect(assertDeliverableUrl("https://[2606:4700::1111]/", { ...STRICT, lookup })).resolves.toEqual([
      { address: "2606:4700::1111", family: 6 },
    ]);
    expect(lookup.asked).toEqual([]);
  });

  it.each([
    ["not a URL", "hooks.example.com/path", /not a valid absolute URL/],
    ["an empty string", "", /not a valid absolute URL/],
    ["ftp", "ftp://hooks.example.com/", /must use https, not 'ftp'/],
    ["file", "file:///etc/passwd", /must use https, not 'file'/],
    ["javascript", "javascript:alert(1)", /must use https, not 'javascript'/],
    ["gopher", "gopher://hooks.example.com/", /must use https/],
    ["http when not allowed", "http://hooks.example.com/", /must use https/],
    ["user and password", "https://user:secret@hooks.example.com/", /credentials/],
    ["a user only", "https://user@hooks.example.com/", /credentials/],
  ])("rejects a URL with %s", async (_, url, message) => {
    const lookup = fakeDns({ "hooks.example.com": ["93.184.216.34"] });
    const attempt = assertDeliverableUrl(url, { ...STRICT, lookup });
    await expect(attempt).rejects.toThrow(message);
    await expect(attempt).rejects.toMatchObject({ code: "invalid_webhook_url" });
    expect(lookup.asked).toEqual([]);
  });

  it("accepts http only when allowed", async () => {
    const lookup = fakeDns({ "hooks.example.com": ["93.184.216.34"] });
    await expect(
      assertDeliverableUrl("http://hooks.example.com/", { allowHttp: true, allowLoopback: false, lookup }),
    ).resolves.toHaveLength(1);
  });

  it("accepts loopback only with allowLoopback, and nothing else private", async () => {
    const lookup = fakeDns({ localhost: ["127.0.0.1", "::1"], "intranet.local": ["127.0.0.1", "192.168.1.20"] });
    await expect(assertDeliverableUrl("http://127.0.0.1:8080/hook", LOCAL_DEV)).resolves.toEqual([{ address: "127.0.0.1", family: 4 }]);
    await expect(assertDeliverableUrl("http://127.9.9.9/", LOCAL_DEV)).resolves.toHaveLength(1);
    await expect(assertDeliverableUrl("http://[::1]:8080/hook", LOCAL_DEV)).resolves.toEqual([{ address: "::1", family: 6 }]);
    await expect(assertDeliverableUrl("http://localhost:8080/", { ...LOCAL_DEV, lookup })).resolves.toHaveLength(2);
    await expect(assertDeliverableUrl("http://localhost:8080/", { ...STRICT, allowHttp: true, lookup })).rejects.toThrow(/loopback/);

    await expect(assertDeliverableUrl("http://intranet.local/", { ...LOCAL_DEV, lookup })).rejects.toThrow(/192\.168\.1\.20.*private/);
    await expect(assertDeliverableUrl("http://10.0.0.1/", LOCAL_DEV)).rejects.toThrow(/private/);
    await expect(assertDeliverableUrl("http://169.254.169.254/", LOCAL_DEV)).rejects.toThrow(/cloud metadata/);
    await expect(assertDeliverableUrl("http://0.0.0.0:8080/", LOCAL_DEV)).rejects.toThrow(/unspecified/);
    // Only 127.0.0.0/8 and ::1 themselves count as loopback.
    await expect(assertDeliverableUrl("http://[::ffff:127.0.0.1]/", LOCAL_DEV)).rejects.toThrow(/IPv4-mapped/);
  });

  it("reports a host that does not resolve, or resolves to nothing", async () => {
    const lookup = fakeDns({ "empty.example.com": [] });
    const unknown = assertDeliverableUrl("https://nowhere.example.com/", { ...STRICT, lookup });
    await expect(unknown).rejects.toThrow(/'nowhere\.example\.com' cannot be resolved \(ENOTFOUND\)/);
    await expect(unknown).rejects.toMatchObject({ code: "webhook_host_unresolvable" });
    await expect(assertDeliverableUrl("https://empty.example.com/", { ...STRICT, lookup })).rejects.toThrow(/has no address/);
  });

  it("uses the system resolver by default (localhost is loopback)", async () => {
    await expect(assertDeliverableUrl("https://localhost/", STRICT)).rejects.toThrow(/loopback/);
    const vetted = await assertDeliverableUrl("https://localhost/", { ...STRICT, allowLoopback: true });
    expect(vetted.length).toBeGreaterThan(0);
    expect(vetted.every((a) => forbiddenAddressReason(a.address) === "loopback")).toBe(true);
  });
});
