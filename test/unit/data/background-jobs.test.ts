/** The data service's background jobs (background-jobs.ts): started in order, stopped in reverse, each awaited. */
import { expect } from "chai";
import { BackgroundJobs } from "../../../services/data/src/background-jobs.ts";

describe("background jobs", () => {
  it("starts the registered jobs in order and stops them in reverse, waiting for each", async () => {
    const seen: string[] = [];
    const job = (name: string) => ({
      start: () => void seen.push(`start ${name}`),
      stop: async () => {
        await Promise.resolve();
        seen.push(`stop ${name}`);
      },
    });
    const jobs = new BackgroundJobs();
    jobs.add("a", job("a"));
    jobs.add("off", undefined);
    jobs.add("also off", false);
    jobs.once("b", async () => void seen.push("ran b"));
    jobs.add("c", job("c"));
    expect(jobs.names).to.deep.equal(["a", "b", "c"]);
    jobs.start();
    await jobs.stop();
    expect(seen).to.deep.equal(["start a", "ran b", "start c", "stop c", "stop a"]);
    await jobs.stop();
    expect(seen, "a second stop stops nothing again").to.have.length(5);
  });

  it("a job that runs once is waited for at the stop", async () => {
    let finish: () => void = () => {};
    let done = false;
    const jobs = new BackgroundJobs();
    jobs.once("slow", async () => {
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
      done = true;
    });
    jobs.start();
    const stopped = jobs.stop();
    finish();
    await stopped;
    expect(done).to.equal(true);
  });
});
