// Redaction by value (the environment's secrets) and by shape, in one piece and across pieces.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeRedactor, REDACTED, secretValues } from "../../src/domain/events/secrets.js";

describe("which values are secrets", () => {
  it("variables named *TOKEN*, *KEY*, *SECRET*, *PASSWORD*, *CREDENTIAL*, and the named ones; short values are not", () => {
    const values = secretValues(
      {
        GITHUB_TOKEN: "q8w7e6r5t4y3",
        my_api_key: "z1x2c3v4b5n6",
        DB_PASSWORD: 'pa"ss\\word99',
        GCP_CREDENTIALS: "c7c7c7c7c7c7",
        SHORT_TOKEN: "abc",
        HOME: "/home/ci",
        MY_THING: "plainvalue99",
      },
      ["MY_THING"],
    );
    // A value JSON escapes is also looked for escaped, as it appears in a raw opencode line.
    expect(values.sort()).toEqual(
      ["q8w7e6r5t4y3", "z1x2c3v4b5n6", 'pa"ss\\word99', 'pa\\"ss\\\\word99', "c7c7c7c7c7c7", "plainvalue99"].sort(),
    );
  });
});

describe("KEY variables: redacted when the value looks like a key, not when it is a word", () => {
  it("LOOKUP_KEY=username and PRIMARY_KEY_COLUMN=customer_id are settings; API keys are keys", () => {
    const env = {
      LOOKUP_KEY: "username",
      PRIMARY_KEY_COLUMN: "customer_id",
      SORT_KEY: "created-at.desc",
      SSH_KEY_PATH: "/home/ci/.ssh/id_ed25519",
      MY_API_KEY: "z1x2c3v4b5n6",
      ANTHROPIC_API_KEY: "sk-ant-api03-abcdefghijklmnop",
      NUMERIC_KEY: "1234567890",
      // Whatever a TOKEN, SECRET, PASSWORD or CREDENTIAL holds is a secret, a word too.
      DB_PASSWORD: "correcthorsebattery",
    };
    expect(secretValues(env).sort()).toEqual(
      ["z1x2c3v4b5n6", "sk-ant-api03-abcdefghijklmnop", "1234567890", "correcthorsebattery"].sort(),
    );
    const r = makeRedactor(secretValues(env));
    expect(r.text("add a username column and index customer_id")).toBe("add a username column and index customer_id");
  });

  it("OC_EXEC_REDACT_EXEMPT names variables that are not secrets; --redact-env still wins", () => {
    const env = {
      BUILD_TOKEN_NAME: "release-2026-11",
      DEPLOY_KEY_ID: "k-9f8e7d6c",
      OC_EXEC_REDACT_EXEMPT: "BUILD_TOKEN_NAME, DEPLOY_KEY_ID",
    };
    expect(secretValues(env)).toEqual([]);
    expect(secretValues(env, ["DEPLOY_KEY_ID"])).toEqual(["k-9f8e7d6c"]);
    expect(secretValues({ ...env, OC_EXEC_REDACT_EXEMPT: "" }).sort()).toEqual(["k-9f8e7d6c", "release-2026-11"]);
  });
});

describe("a redactor", () => {
  const secret = "k3j4h5g6f7d8s9a0";
  const r = () => makeRedactor([secret]);

  it("replaces the value anywhere in a text, and known token shapes too", () => {
    expect(r().text(`token=${secret}; again ${secret}.`)).toBe(`token=${REDACTED}; again ${REDACTED}.`);
    expect(r().text("ghp_abcdefghijklmnopqrstuvwxyz0123")).toBe(REDACTED);
  });

  it("walks an event: tool output, input, error message, nested arrays", () => {
    const event = {
      type: "tool",
      output: `printed ${secret}`,
      input: { command: `echo ${secret}`, list: [secret, 1, null] },
      error: { message: `failed with ${secret}` },
    };
    expect(r().event(event)).toEqual({
      type: "tool",
      output: `printed ${REDACTED}`,
      input: { command: `echo ${REDACTED}`, list: [REDACTED, 1, null] },
      error: { message: `failed with ${REDACTED}` },
    });
  });

  it("a secret split across pieces never shows, however the text is cut; the pieces and the rest add up", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        fc.string({ maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 10 }),
        (before, after, cuts) => {
          const whole = `${before}${secret}${after}`;
          const red = r();
          const shown: string[] = [];
          let at = 0;
          for (const n of cuts) {
            if (at >= whole.length) break;
            shown.push(red.piece("p1", whole.slice(at, at + n)));
            at += n;
          }
          shown.push(red.piece("p1", whole.slice(at)));
          for (const [key, rest] of red.flush()) {
            expect(key).toBe("p1");
            shown.push(rest);
          }
          const text = shown.join("");
          for (const piece of shown) expect(piece).not.toContain(secret.slice(0, 8));
          expect(text).toBe(makeRedactor([secret]).text(whole));
        },
      ),
    );
  });

  it("with no secret values, an ordinary text passes unchanged and nothing is held back", () => {
    const red = makeRedactor([]);
    expect(red.piece("p", "hello ")).toBe("hello ");
    expect(red.flush()).toEqual([]);
  });
});

describe("shapes that need no variable", () => {
  it("a private key block, whole or cut off, and an AWS secret in a credentials file", () => {
    const r = makeRedactor([]);
    expect(r.text("key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----\nok")).toBe(
      "key: [REDACTED PRIVATE KEY]\nok",
    );
    expect(r.text("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIB")).toBe("[REDACTED PRIVATE KEY]");
    expect(r.text("[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG\n")).toBe(
      "[default]\naws_secret_access_key = [REDACTED]\n",
    );
  });
});

it("a cut-off key block takes its base64 lines and nothing after them", () => {
  expect(makeRedactor([]).text("ssh key: -----BEGIN OPENSSH PRIVATE KEY-----\nabc123==\nnext: line\n")).toBe(
    "ssh key: [REDACTED PRIVATE KEY]\nnext: line\n",
  );
});
