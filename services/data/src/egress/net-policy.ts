/**
 * Which addresses outbound requests (http-request.ts) may connect to, and which hosts an
 * allow-list lets through. Anything that is not plain public unicast is refused: private, loopback, link-local, unspecified,
 * multicast, broadcast, shared (CGNAT), documentation / benchmark / reserved
 * ranges, and IPv6 forms that embed such an IPv4 address (IPv4-mapped,
 * IPv4-compatible, NAT64, 6to4) or tunnel to one (Teredo).
 */
import { BlockList, isIP } from "node:net";

export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "unspecified"
  | "multicast"
  | "reserved"
  | "invalid";

type Family = "ipv4" | "ipv6";

/** One class's subnets in one family, as a `BlockList` (CIDR strings in, no hand-written range tests). */
function subnets(family: Family, cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network = "", prefix] = cidr.split("/");
    list.addSubnet(network, Number(prefix), family);
  }
  return list;
}

/** Checked in order, first match wins; an address in none of them is public. */
const V4_CLASSES: [AddressClass, BlockList][] = [
  ["unspecified", subnets("ipv4", ["0.0.0.0/8"])], // "this network"
  ["loopback", subnets("ipv4", ["127.0.0.0/8"])],
  ["private", subnets("ipv4", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"])], // incl. CGNAT
  ["link-local", subnets("ipv4", ["169.254.0.0/16"])], // incl. the cloud metadata address
  ["multicast", subnets("ipv4", ["224.0.0.0/4"])],
  [
    "reserved",
    subnets("ipv4", [
      "240.0.0.0/4", // incl. 255.255.255.255 broadcast
      "192.0.0.0/24", // IETF protocol assignments
      "192.0.2.0/24", // TEST-NET-1
      "198.51.100.0/24", // TEST-NET-2
      "203.0.113.0/24", // TEST-NET-3
      "198.18.0.0/15", // benchmarking
      "192.88.99.0/24", // 6to4 relay anycast
    ]),
  ],
];

/** IPv6 ranges after the embedded-IPv4 forms are taken out; outside them, anything not in 2000::/3 is reserved. */
const V6_CLASSES: [AddressClass, BlockList][] = [
  ["unspecified", subnets("ipv6", ["::/128"])],
  ["loopback", subnets("ipv6", ["::1/128"])],
  [
    "reserved",
    subnets("ipv6", [
      "::/96", // deprecated IPv4-compatible ::a.b.c.d
      "64:ff9b::/32", // NAT64 prefixes other than the well-known /96 (e.g. local-use 64:ff9b:1::/48)
      "2001::/32", // Teredo
      "2001:db8::/32", // documentation
      "100::/64", // discard
    ]),
  ],
  ["private", subnets("ipv6", ["fc00::/7", "fec0::/10"])], // unique local, deprecated site-local
  ["link-local", subnets("ipv6", ["fe80::/10"])],
  ["multicast", subnets("ipv6", ["ff00::/8"])],
];

const GLOBAL_UNICAST = subnets("ipv6", ["2000::/3"]);

/** IPv6 prefixes that carry an IPv4 address, and the byte offset it starts at. */
const EMBEDDING_V4: [BlockList, number][] = [
  [subnets("ipv6", ["::ffff:0:0/96"]), 12], // IPv4-mapped
  [subnets("ipv6", ["64:ff9b::/96"]), 12], // NAT64 well-known prefix
  [subnets("ipv6", ["2002::/16"]), 2], // 6to4
];

/** 16 bytes of an IPv6 address (with an optional dotted IPv4 tail, brackets and zone id), or undefined. */
export function parseV6(text: string): number[] | undefined {
  let s = text;
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  s = s.split("%")[0] ?? "";
  if (isIP(s) !== 6) return undefined;
  const lastColon = s.lastIndexOf(":");
  const tail = s.slice(lastColon + 1);
  if (tail.includes(".")) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split(".").map(Number);
    s = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = [], rest] = s
    .split("::")
    .map((h) => (h === "" ? [] : h.split(":").map((g) => Number.parseInt(g, 16))));
  const groups =
    rest === undefined ? head : [...head, ...new Array(8 - head.length - rest.length).fill(0), ...rest];
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

function firstClass(
  classes: [AddressClass, BlockList][],
  address: string,
  family: Family,
): AddressClass | undefined {
  return classes.find(([, list]) => list.check(address, family))?.[0];
}

function classifyV4(address: string): AddressClass {
  return firstClass(V4_CLASSES, address, "ipv4") ?? "public";
}

function classifyV6(address: string): AddressClass {
  const embedding = EMBEDDING_V4.find(([prefix]) => prefix.check(address, "ipv6"));
  if (embedding) {
    const bytes = parseV6(address) as number[];
    return classifyV4(bytes.slice(embedding[1], embedding[1] + 4).join("."));
  }
  const cls = firstClass(V6_CLASSES, address, "ipv6");
  if (cls) return cls;
  return GLOBAL_UNICAST.check(address, "ipv6") ? "public" : "reserved";
}

/** Classifies an IP address literal (IPv4 dotted quad or IPv6, brackets and zone allowed). */
export function classifyAddress(address: string): AddressClass {
  const bracketless = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const bare = bracketless.split("%")[0] ?? "";
  const family = isIP(bare);
  if (family === 4) return bare === bracketless ? classifyV4(bare) : "invalid"; // no zone id on IPv4
  if (family === 6) return classifyV6(bare);
  return "invalid";
}

/** True when an outbound request may connect to `address`; loopback only when `allowLoopback`. */
export function isAddressAllowed(address: string, allowLoopback: boolean): boolean {
  const cls = classifyAddress(address);
  return cls === "public" || (allowLoopback && cls === "loopback");
}

/**
 * Normalises an allow-list entry: lower case, no brackets, optional `:port`,
 * `*.` prefix for "any subdomain of". Returns undefined for entries that cannot match.
 */
export interface HostRule {
  host: string;
  wildcard: boolean;
  port: number | undefined;
}

export function parseHostRule(entry: string): HostRule | undefined {
  let s = entry.trim().toLowerCase();
  if (s === "") return undefined;
  let port: number | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s);
  if (bracket) {
    s = bracket[1] ?? "";
    port = bracket[2] === undefined ? undefined : Number(bracket[2]);
  } else if (isIP(s) !== 6) {
    const m = /^(.*?)(?::(\d{1,5}))?$/.exec(s);
    if (!m) return undefined;
    s = m[1] ?? "";
    port = m[2] === undefined ? undefined : Number(m[2]);
  }
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  const wildcard = s.startsWith("*.");
  if (wildcard) s = s.slice(2);
  if (s.endsWith(".")) s = s.slice(0, -1);
  if (!/^[a-z0-9._:-]+$/.test(s)) return undefined;
  return { host: s, wildcard, port };
}

/** Does `hostname` (lower case, no brackets, no trailing dot) on `port` match one of the rules? */
export function hostAllowed(rules: HostRule[], hostname: string, port: number): boolean {
  return rules.some(
    (r) =>
      (r.port === undefined || r.port === port) &&
      (r.wildcard ? hostname.endsWith(`.${r.host}`) : hostname === r.host),
  );
}
