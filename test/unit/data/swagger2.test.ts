/** How the OpenAPI 3.1 schemas of @docs read in Swagger 2.0 (schema2): what 2.0 lacks, said as near as it can. */
import { expect } from "chai";
import { schema2 } from "../../../services/data/src/http/swagger2.ts";

describe("Swagger 2.0 schemas", () => {
  it("a type list with null is the type and x-nullable", () => {
    expect(schema2({ type: ["string", "null"], maxLength: 5 })).to.deep.equal({
      type: "string",
      maxLength: 5,
      "x-nullable": true,
    });
  });

  it("references point into definitions; a reference with siblings is an allOf", () => {
    expect(schema2({ $ref: "#/components/schemas/row.a" })).to.deep.equal({ $ref: "#/definitions/row.a" });
    expect(schema2({ $ref: "#/components/schemas/insert.a", required: ["x"] })).to.deep.equal({
      required: ["x"],
      allOf: [{ $ref: "#/definitions/insert.a" }],
    });
  });

  it("anyOf with null is the other schema, nullable; any other anyOf is x-anyOf", () => {
    expect(schema2({ anyOf: [{ $ref: "#/components/schemas/row.p" }, { type: "null" }] })).to.deep.equal({
      "x-nullable": true,
      allOf: [{ $ref: "#/definitions/row.p" }],
    });
    expect(
      schema2({ anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] }),
    ).to.deep.equal({
      "x-anyOf": [{ type: "string" }, { type: "array", items: { type: "string" } }],
    });
  });

  it("const is a one-value enum; an array always has items; nested schemas are converted", () => {
    expect(schema2({ const: "children" })).to.deep.equal({ enum: ["children"] });
    expect(schema2({ type: "array", prefixItems: [{ type: "integer" }] })).to.deep.equal({
      type: "array",
      items: {},
    });
    expect(
      schema2({
        type: "object",
        properties: { a: { type: ["integer", "null"] } },
        additionalProperties: false,
      }),
    ).to.deep.equal({
      type: "object",
      properties: { a: { type: "integer", "x-nullable": true } },
      additionalProperties: false,
    });
  });
});
