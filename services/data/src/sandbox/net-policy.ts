/**
 * Which addresses sandboxed code may connect to. Anything that is not plain
 * public unicast is refused: private, loopback, link-local, unspecified,
 * multicast, broadcast, shared (CGNAT), documentation / benchmark / reserved
 * ranges, and IPv6 forms that embed such an IPv4 address (IPv4-mapped,
 * IPv4-compatible, NAT64, 6to4) or tunnel to one (Teredo).
 */
import { isIP } from "node:net";

export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "unspecified"
  | "multicast"
  | "reserved"
  | "invalid";

type V4 = [number, number, number, number];

function parseV4(text: string): V4 | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out as V4;
}

/** 16 bytes of an IPv6 address (with an optional dotted IPv4 tail and zone id), or undefined. */
export function parseV6(text: string): number[] | undefined {
  let s = text;
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const lastColon = s.lastIndexOf(":");
  if (s.slice(lastColon + 1).includes(".")) {
    const v4 = parseV4(s.slice(lastColon + 1));
    if (!v4) return undefined;
    const hi = ((v4[0] << 8) | v4[1]).toString(16);
    const lo = ((v4[2] << 8) | v4[3]).toString(16);
    s = `${s.slice(0, lastColon + 1)}${hi}:${lo}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const toGroups = (h: string): number[] | undefined => {
    if (h === "") return [];
    const groups: number[] = [];
    for (const g of h.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      groups.push(Number.parseInt(g, 16));
    }
    return groups;
  };
  const head = toGroups(halves[0]);
  const rest = halves.length === 2 ? toGroups(halves[1]) : [];
  if (!head || !rest) return undefined;
  const given = head.length + rest.length;
  let groups: number[];
  if (halves.length === 2) {
    if (given > 7) return undefined;
    groups = [...head, ...new Array(8 - given).fill(0), ...rest];
  } else {
    if (given !== 8) return undefined;
    groups = head;
  }
  const bytes: number[] = [];
  for (const g of groups) bytes.push(g >> 8, g & 0xff);
  return bytes;
}

function classifyV4([a, b, c]: V4): AddressClass {
  if (a === 0) return "unspecified"; // 0.0.0.0/8 "this network"
  if (a === 127) return "loopback";
  if (a === 10) return "private";
  if (a === 172 && b >= 16 && b <= 31) return "private";
  if (a === 192 && b === 168) return "private";
  if (a === 100 && b >= 64 && b <= 127) return "private"; // shared address space (CGNAT)
  if (a === 169 && b === 254) return "link-local";
  if (a >= 224 && a <= 239) return "multicast";
  if (a >= 240) return "reserved"; // incl. 255.255.255.255 broadcast
  if (a === 192 && b === 0 && c === 0) return "reserved"; // IETF protocol assignments
  if (a === 192 && b === 0 && c === 2) return "reserved"; // TEST-NET-1
  if (a === 198 && b === 51 && c === 100) return "reserved"; // TEST-NET-2
  if (a === 203 && b === 0 && c === 113) return "reserved"; // TEST-NET-3
  if (a === 198 && (b === 18 || b === 19)) return "reserved"; // benchmarking
  if (a === 192 && b === 88 && c === 99) return "reserved"; // 6to4 relay anycast
  return "public";
}

function classifyV6(x: number[]): AddressClass {
  const zero = (from: number, to: number) => x.slice(from, to).every((v) => v === 0);
  const embedded = (at: number) => classifyV4([x[at], x[at + 1], x[at + 2], x[at + 3]]);
  if (zero(0, 16)) return "unspecified";
  if (zero(0, 15) && x[15] === 1) return "loopback";
  if (zero(0, 10) && x[10] === 0xff && x[11] === 0xff) return embedded(12); // ::ffff:a.b.c.d
  if (zero(0, 12)) return "reserved"; // deprecated IPv4-compatible ::a.b.c.d
  if (x[0] === 0x00 && x[1] === 0x64 && x[2] === 0xff && x[3] === 0x9b) {
    // NAT64 64:ff9b::/96 (well-known) and 64:ff9b:1::/48 (local use)
    return zero(4, 12) ? embedded(12) : "reserved";
  }
  if (x[0] === 0x20 && x[1] === 0x02) return embedded(2); // 6to4 2002::/16
  if (x[0] === 0x20 && x[1] === 0x01 && x[2] === 0x00 && x[3] === 0x00) return "reserved"; // Teredo 2001::/32
  if (x[0] === 0x20 && x[1] === 0x01 && x[2] === 0x0d && x[3] === 0xb8) return "reserved"; // documentation
  if (x[0] === 0x01 && x[1] === 0x00 && zero(2, 8)) return "reserved"; // discard 100::/64
  if ((x[0] & 0xfe) === 0xfc) return "private"; // unique local fc00::/7
  if (x[0] === 0xfe && (x[1] & 0xc0) === 0x80) return "link-local"; // fe80::/10
  if (x[0] === 0xfe && (x[1] & 0xc0) === 0xc0) return "private"; // site-local fec0::/10 (deprecated)
  if (x[0] === 0xff) return "multicast";
  if ((x[0] & 0xe0) !== 0x20) return "reserved"; // outside global unicast 2000::/3
  return "public";
}

/** Classifies an IP address literal (IPv4 dotted quad or IPv6, brackets and zone allowed). */
export function classifyAddress(address: string): AddressClass {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const family = isIP(bare.split("%")[0]);
  if (family === 4) {
    const v4 = parseV4(bare);
    return v4 ? classifyV4(v4) : "invalid";
  }
  if (family === 6) {
    const v6 = parseV6(bare);
    return v6 ? classifyV6(v6) : "invalid";
  }
  return "invalid";
}

/** True when sandboxed code may connect to `address`; loopback only when `allowLoopback`. */
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
    s = bracket[1];
    port = bracket[2] === undefined ? undefined : Number(bracket[2]);
  } else if (isIP(s) !== 6) {
    const m = /^(.*?)(?::(\d{1,5}))?$/.exec(s);
    if (!m) return undefined;
    s = m[1];
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
