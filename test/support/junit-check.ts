// Validates a JUnit report against the junit-10 structure (test/fixtures/junit/junit-10.xsd) with
// libxml2 (xmllint, compiled to WebAssembly): a real XML parser and schema validator, not strings.
import { readFileSync } from "node:fs";
import { validateXML } from "xmllint-wasm";

const schema = readFileSync(new URL("../fixtures/junit/junit-10.xsd", import.meta.url), "utf8");

/** The validator's errors (empty when valid). */
export async function junitErrors(xml: string): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: "report.xml", contents: xml }],
    schema: [{ fileName: "junit-10.xsd", contents: schema }],
  });
  return result.valid ? [] : result.errors.map((e) => e.rawMessage);
}
