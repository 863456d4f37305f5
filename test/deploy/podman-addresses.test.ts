/**
 * The fixed addresses `make test-deploy` gives the pods that stand in for Services (test/podman/cluster.ts):
 * the last usable ones of the run's network, never its network, gateway or broadcast address.
 */
import { expect } from "chai";
import { addressesAtTheEnd } from "../podman/cluster.ts";

describe("the Services' stand-ins' addresses on a podman network", () => {
  const names = ["tessera-redis", "tessera-ferretdb", "tessera-edge"] as const;

  it("takes the last usable addresses of the subnet, one per name, in order", () => {
    expect(addressesAtTheEnd("10.89.3.0/24", names)).to.deep.equal({
      "tessera-redis": "10.89.3.254",
      "tessera-ferretdb": "10.89.3.253",
      "tessera-edge": "10.89.3.252",
    });
    expect(addressesAtTheEnd("10.89.0.0/16", names)["tessera-redis"]).to.equal("10.89.255.254");
    expect(addressesAtTheEnd("192.168.10.64/28", names)["tessera-edge"]).to.equal("192.168.10.76");
  });

  it("reads a subnet written from any address inside it", () => {
    expect(addressesAtTheEnd("10.89.3.17/24", names)["tessera-redis"]).to.equal("10.89.3.254");
  });

  it("refuses a subnet too small to leave the gateway and the pods room, and what is not an IPv4 subnet", () => {
    expect(() => addressesAtTheEnd("10.89.3.0/30", names)).to.throw(/too small/);
    expect(() => addressesAtTheEnd("fd00::/64", names)).to.throw(/not an IPv4 subnet/);
    expect(() => addressesAtTheEnd("10.89.3.0", names)).to.throw(/not an IPv4 subnet/);
  });
});
