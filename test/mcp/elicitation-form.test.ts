// The one reading of an elicitation form (shared/elicitation.ts): what the daemon checks an answer
// with and what the line-mode and TUI prompts parse typed text with.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { checkElicitationAnswer, describeField, elicitationFields, parseFieldInput } from "../../shared/elicitation.js";

const schema = {
  type: "object",
  properties: {
    name: { type: "string", title: "Name", minLength: 2 },
    age: { type: "integer", minimum: 0, maximum: 150 },
    ok: { type: "boolean", default: false },
    pet: { type: "string", enum: ["p1", "p2"], enumNames: ["Cat", "Dog"] },
    tags: {
      type: "array",
      items: {
        anyOf: [
          { const: "a", title: "Alpha" },
          { const: "b", title: "Beta" },
        ],
      },
      maxItems: 1,
    },
  },
  required: ["name"],
};

test("fields: kinds, labels, choices with their titles, required and defaults", () => {
  const f = elicitationFields(schema);
  assert.equal(
    f.map((x) => [x.name, x.type, x.label, x.required]),
    [
      ["name", "string", "Name", true],
      ["age", "integer", "age", false],
      ["ok", "boolean", "ok", false],
      ["pet", "choice", "pet", false],
      ["tags", "choices", "tags", false],
    ],
  );
  assert.equal(f[3]!.choices, [
    { value: "p1", label: "Cat" },
    { value: "p2", label: "Dog" },
  ]);
  assert.is(describeField(f[1]!), "integer 0–150");
  assert.is(f[2]!.default, false);
});

test("typed text: parsed by kind, titles accepted for choices, errors say what fits", () => {
  const [name, age, ok, pet, tags] = elicitationFields(schema);
  assert.equal(parseFieldInput(name!, ""), { error: "is required" });
  assert.equal(parseFieldInput(name!, "x"), { error: "must be at least 2 characters" });
  assert.equal(parseFieldInput(age!, "12"), { value: 12 });
  assert.equal(parseFieldInput(age!, "1.5"), { error: "must be an integer" });
  assert.equal(parseFieldInput(age!, "twelve"), { error: "must be an integer" });
  assert.equal(parseFieldInput(age!, ""), {}, "an optional field left empty is left out");
  assert.equal(parseFieldInput(ok!, ""), { value: false }, "the default");
  assert.equal(parseFieldInput(ok!, "Yes"), { value: true });
  assert.equal(parseFieldInput(pet!, "dog"), { value: "p2" });
  assert.equal(parseFieldInput(pet!, "p3"), { error: "must be one of p1, p2" });
  assert.equal(parseFieldInput(tags!, "Alpha"), { value: ["a"] });
  assert.equal(parseFieldInput(tags!, "a, b"), { error: "takes at most 1" });
});

test("a whole answer: unknown keys, wrong types and missing required fields are named", () => {
  assert.is(checkElicitationAnswer(schema, { name: "Al", age: 3, pet: "p1", tags: ["b"] }), null);
  assert.is(checkElicitationAnswer(schema, { age: "3", extra: 1 }), "extra is not a field of this form; name is required; age must be an integer");
});

test("a form with a field of another kind (nested object) is refused, naming the field", () => {
  assert.throws(
    () => elicitationFields({ type: "object", properties: { addr: { type: "object", properties: {} } } }),
    /field addr: type "object" is not one a form can ask/,
  );
});

test.run();
