/** Which addresses outbound requests may reach, and allow-list matching. */
import { expect } from "chai";
import {
  classifyAddress,
  hostAllowed,
  isAddressAllowed,
  parseHostRule,
  parseV6,
} from "../../../services/data/src/egress/net-policy.ts";

describe("egress network policy", () => {
  it("classifies IPv4 addresses", () => {
    const cases: [string, string][] = [
      ["8.8.8.8", "public"],
      ["93.184.216.34", "public"],
      ["127.0.0.1", "loopback"],
      ["127.255.255.254", "loopback"],
      ["10.0.0.1", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", "public"],
      ["192.168.1.1", "private"],
      ["100.64.0.1", "private"],
      ["169.254.169.254", "link-local"],
      ["0.0.0.0", "unspecified"],
      ["0.1.2.3", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["239.255.255.250", "multicast"],
      ["255.255.255.255", "reserved"],
      ["240.0.0.1", "reserved"],
      ["192.0.2.1", "reserved"],
      ["198.18.0.1", "reserved"],
      ["not an ip", "invalid"],
    ];
    for (const [address, cls] of cases) expect(classifyAddress(address), address).to.equal(cls);
  });

  it("classifies IPv6 addresses, including IPv4 embedded in them", () => {
    const cases: [string, string][] = [
      ["2606:4700:4700::1111", "public"],
      ["::1", "loopback"],
      ["[::1]", "loopback"],
      ["0:0:0:0:0:0:0:1", "loopback"],
      ["::", "unspecified"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::ffff:10.0.0.1", "private"],
      ["::ffff:169.254.169.254", "link-local"],
      ["::ffff:8.8.8.8", "public"],
      ["::127.0.0.1", "reserved"],
      ["64:ff9b::10.0.0.1", "private"],
      ["64:ff9b::8.8.8.8", "public"],
      ["2002:7f00:1::", "loopback"],
      ["2002:0808:0808::", "public"],
      ["2001:0:4136:e378::1", "reserved"],
      ["2001:db8::1", "reserved"],
      ["fc00::1", "private"],
      ["fd12:3456::1", "private"],
      ["fe80::1", "link-local"],
      ["fe80::1%eth0", "link-local"],
      ["fec0::1", "private"],
      ["ff02::1", "multicast"],
      ["100::1", "reserved"],
    ];
    for (const [address, cls] of cases) expect(classifyAddress(address), address).to.equal(cls);
    expect(parseV6("1::2:3::4")).to.equal(undefined);
    expect(parseV6("::ffff:1.2.3.4")?.slice(10)).to.deep.equal([0xff, 0xff, 1, 2, 3, 4]);
  });

  it("classifies the edges of every range, and ranges the cases above leave out", () => {
    const cases: [string, string][] = [
      ["9.255.255.255", "public"],
      ["11.0.0.0", "public"],
      ["126.255.255.255", "public"],
      ["128.0.0.0", "public"],
      ["172.15.255.255", "public"],
      ["192.167.255.255", "public"],
      ["192.169.0.0", "public"],
      ["100.63.255.255", "public"],
      ["100.127.255.255", "private"],
      ["100.128.0.0", "public"],
      ["169.253.255.255", "public"],
      ["169.254.0.0", "link-local"],
      ["169.255.0.0", "public"],
      ["223.255.255.255", "public"],
      ["192.0.0.8", "reserved"],
      ["192.0.1.1", "public"],
      ["198.51.100.7", "reserved"],
      ["203.0.113.9", "reserved"],
      ["198.19.255.255", "reserved"],
      ["198.17.255.255", "public"],
      ["198.20.0.0", "public"],
      ["192.88.99.1", "reserved"],
      ["010.0.0.1", "invalid"],
      ["1.2.3", "invalid"],
      ["::ffff:192.168.0.1", "private"],
      ["::ffff:100.64.0.1", "private"],
      ["::ffff:0.0.0.0", "unspecified"],
      ["::ffff:224.0.0.1", "multicast"],
      ["::ffff:a9fe:a9fe", "link-local"],
      ["[::ffff:169.254.169.254]", "link-local"],
      ["::8.8.8.8", "reserved"],
      ["::2", "reserved"],
      ["64:ff9b::a9fe:a9fe", "link-local"],
      ["64:ff9b:1::8.8.8.8", "reserved"],
      ["64:ff9b:0:0:1::", "reserved"],
      ["2002:a9fe:a9fe::1", "link-local"],
      ["2002:c0a8:101::", "private"],
      ["2001:0:ffff::", "reserved"],
      ["2001:1::1", "public"],
      ["2001:db8:ffff::1", "reserved"],
      ["2001:db9::1", "public"],
      ["100::ffff:1", "reserved"],
      ["100:0:0:1::", "reserved"],
      ["1fff:ffff::1", "reserved"],
      ["3fff:ffff::1", "public"],
      ["4000::1", "reserved"],
      ["fbff::1", "reserved"],
      ["fdff:ffff::1", "private"],
      ["fe7f::1", "reserved"],
      ["febf:ffff::1", "link-local"],
      ["feff::1", "private"],
      ["ff00::", "multicast"],
      ["fd00::1%2", "private"],
      ["1::2:3::4", "invalid"],
      ["[127.0.0.1]", "loopback"],
      ["", "invalid"],
      ["10.0.0.1%eth0", "invalid"],
    ];
    for (const [address, cls] of cases) expect(classifyAddress(address), address).to.equal(cls);
  });

  it("allows public addresses, and loopback only when asked", () => {
    expect(isAddressAllowed("8.8.8.8", false)).to.equal(true);
    expect(isAddressAllowed("127.0.0.1", false)).to.equal(false);
    expect(isAddressAllowed("127.0.0.1", true)).to.equal(true);
    expect(isAddressAllowed("::1", true)).to.equal(true);
    expect(isAddressAllowed("::ffff:127.0.0.1", true)).to.equal(true);
    for (const other of ["10.0.0.1", "169.254.169.254", "0.0.0.0", "::", "fe80::1", "fd00::1", "224.0.0.1"]) {
      expect(isAddressAllowed(other, true), other).to.equal(false);
    }
  });

  it("matches allow-list entries: exact hosts, *.suffix, optional port, IP literals", () => {
    const rules = [
      "id.example.com",
      "*.corp.example",
      "api.example.org:8443",
      "127.0.0.1",
      "[::1]",
      "BAD HOST!",
    ]
      .map(parseHostRule)
      .filter((r) => r !== undefined);
    expect(rules).to.have.length(5);
    expect(hostAllowed(rules, "id.example.com", 443)).to.equal(true);
    expect(hostAllowed(rules, "evil-id.example.com", 443)).to.equal(false);
    expect(hostAllowed(rules, "id.example.com.evil.net", 443)).to.equal(false);
    expect(hostAllowed(rules, "a.corp.example", 80)).to.equal(true);
    expect(hostAllowed(rules, "corp.example", 80)).to.equal(false);
    expect(hostAllowed(rules, "api.example.org", 8443)).to.equal(true);
    expect(hostAllowed(rules, "api.example.org", 443)).to.equal(false);
    expect(hostAllowed(rules, "127.0.0.1", 12345)).to.equal(true);
    expect(hostAllowed(rules, "::1", 80)).to.equal(true);
  });
});
