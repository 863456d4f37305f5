/** A service's counters: every series asked for is reported from the start, once. */
import { expect } from "chai";
import { createMetrics } from "../../../shared/http/metrics.ts";

describe("service metrics", () => {
  it("reports the label values a counter names at 0 before anything counted them", async () => {
    const metrics = createMetrics("test");
    const refusals = metrics.counter("t_refusals_total", "refusals", ["reason"], {
      reason: ["cpu", "queue"],
    });
    metrics.counter("t_plain_total", "plain", []);
    const text = await metrics.registry.metrics();
    expect(text).to.include('t_refusals_total{reason="cpu",service="test"} 0');
    expect(text).to.include('t_refusals_total{reason="queue",service="test"} 0');
    expect(text).to.include('t_plain_total{service="test"} 0');
    refusals.inc({ reason: "cpu" });
    // Asked again (an app built twice on one registry): the same counter, its counts kept.
    const again = metrics.counter("t_refusals_total", "refusals", ["reason"], { reason: ["cpu", "queue"] });
    expect(again).to.equal(refusals);
    expect(await metrics.registry.metrics()).to.include('t_refusals_total{reason="cpu",service="test"} 1');
  });
});
