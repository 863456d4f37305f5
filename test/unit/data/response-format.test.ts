/** Which format a request asks for: the URL parameter, then the original product's headers, then JSON. */
import { expect } from "chai";
import { parseQueryString } from "../../../services/data/src/domain/read/query-params.ts";
import { requestedFormat } from "../../../services/data/src/http/response-format.ts";
import { ApiError } from "../../../shared/errors.ts";

function ask(query: string, headers: Record<string, string> = {}, fallback?: "json" | "jsonObject" | "xml") {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return requestedFormat(parseQueryString(query), (name) => lower[name.toLowerCase()], fallback);
}

function refusal(query: string, headers: Record<string, string> = {}): ApiError {
  try {
    ask(query, headers);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("response format negotiation", () => {
  it("defaults to JSON", () => {
    expect(ask("")).to.equal("json");
  });
  it("reads every one of the original product's header names, in any letter case", () => {
    expect(ask("", { "X-CALiveAPICreator-ResponseFormat": "csv" })).to.equal("csv");
    expect(ask("", { "X-EspressoLogic-ResponseFormat": "XML" })).to.equal("xml");
    expect(ask("", { "x-liveapicreatorlogic-responseformat": " json " })).to.equal("json");
  });
  it("lets the URL parameter beat the headers", () => {
    expect(ask("responseformat=csv", { "X-CALiveAPICreator-ResponseFormat": "xml" })).to.equal("csv");
    expect(ask("responseformat=json", { "X-EspressoLogic-ResponseFormat": "csv" })).to.equal("json");
  });
  it('reads jsonObject (the original\'s "JSON Object") in any letter case', () => {
    expect(ask("responseformat=jsonObject")).to.equal("jsonObject");
    expect(ask("", { "X-CALiveAPICreator-ResponseFormat": "JSONOBJECT" })).to.equal("jsonObject");
  });
  it("falls back to the version's default format only when the request names none", () => {
    expect(ask("", {}, "jsonObject")).to.equal("jsonObject");
    expect(ask("", {}, "xml")).to.equal("xml");
    expect(ask("responseformat=json", {}, "xml")).to.equal("json");
    expect(ask("", { "X-EspressoLogic-ResponseFormat": "csv" }, "jsonObject")).to.equal("csv");
  });
  it("accepts several headers when they agree", () => {
    expect(
      ask("", { "X-CALiveAPICreator-ResponseFormat": "xml", "X-EspressoLogic-ResponseFormat": "Xml" }),
    ).to.equal("xml");
  });
  it("refuses unknown formats, conflicting headers and a repeated parameter with 400/4001", () => {
    for (const [query, headers] of [
      ["responseformat=yaml", {}],
      ["responseformat=", {}],
      ["responseformat=csv&responseformat=xml", {}],
      ["", { "X-CALiveAPICreator-ResponseFormat": "json object" }],
      ["", { "X-CALiveAPICreator-ResponseFormat": "csv", "X-liveapicreatorLogic-ResponseFormat": "json" }],
    ] as [string, Record<string, string>][]) {
      const err = refusal(query, headers);
      expect([err.statusCode, err.errorCode], query + JSON.stringify(headers)).to.deep.equal([400, 4001]);
    }
    expect(refusal("responseformat=yaml").message).to.contain("json, jsonObject, csv, xml");
  });
});
