/**
 * The streamed JSON parser (lib/http/json-stream.ts) reads exactly what JSON.parse reads, however
 * the body is cut into chunks, and refuses at its bounds.
 */
import { JsonStreamParser, type JsonBounds } from "../../../../lib/http/json-stream";

const WIDE: JsonBounds = { maxBytes: 1 << 20, maxValues: 10_000, maxDepth: 16, maxStringChars: 10_000 };

function parseInPieces(text: string, cuts: number[], bounds = WIDE): { value?: unknown; error?: string } {
  const p = new JsonStreamParser(bounds);
  try {
    let at = 0;
    for (const cut of [...cuts, text.length]) {
      p.write(text.slice(at, cut));
      at = cut;
    }
    return { value: p.end() };
  } catch (err) {
    return { error: (err as { type?: string }).type ?? String(err) };
  }
}

function viaJsonParse(text: string): { value?: unknown; error?: string } {
  try {
    const value = JSON.parse(text) as unknown;
    // Strict mode, as body-parser's: the top level is an object or an array.
    if (typeof value !== "object" || value === null) return { error: "INVALID" };
    return { value };
  } catch {
    return { error: "INVALID" };
  }
}

const TEXTS = [
  "{}",
  "[]",
  ' \n\t\r{ "a" : 1 , "b" : [ true , false , null ] } ',
  '{"s": "plain", "e": "tab\\tquote\\"slash\\\\end\\\\", "u": "\\u00e9\\ud83d\\ude00\\u0000"}',
  '{"run": "\\\\\\\\", "q": "\\\\\\"", "k\\"ey": "v"}',
  '{"n": [0, -0, 1.5, -2e10, 3E-2, 1e+5, 12345678901234567890]}',
  '{"deep": [[[[{"x": [{}]}]]]]}',
  '{"dup": 1, "dup": 2}',
  '{"__proto__": {"polluted": true}, "constructor": 1}',
  '{"multibyte": "héllo wörld 日本 😀"}',
  // Not JSON:
  "",
  "   ",
  "{",
  "{}}",
  "{} {}",
  '{"a"}',
  '{"a":}',
  '{"a":1,}',
  "[1,]",
  "[01]",
  "[1.]",
  "[.5]",
  "[+1]",
  "[-]",
  "[tru]",
  "[truex]",
  "[nul]",
  '["\\x"]',
  '["\\u12"]',
  '["a\nb"]',
  '{"k\u0001ey": 1}',
  '["tab\tin a string"]',
  '["\\u001f is escaped: \\u001f"]',
  '["a\\\\", "b\\\\\\"c"]',
  '["\\"]',
  '["\\u"]',
  '["unterminated]',
  "[1 2]",
  '{"a" 1}',
  "{1: 2}",
  "['single']",
  '"top string"',
  "42",
  "null",
  "\uFEFF{}",
];

describe("the streamed JSON parser", () => {
  test.each(TEXTS.map((t) => [JSON.stringify(t), t]))("%s reads as JSON.parse reads it, cut anywhere", (_name, text) => {
    const expected = text.trim() === "" ? { value: undefined } : viaJsonParse(text);
    const cuts = [[], ...Array.from({ length: text.length + 1 }, (_, i) => [i])];
    // And in pieces of one and two characters (every escape cut at every place).
    cuts.push(Array.from({ length: text.length }, (_, i) => i));
    cuts.push(Array.from({ length: Math.floor(text.length / 2) }, (_, i) => 2 * i + 1));
    for (const c of cuts) {
      const got = parseInPieces(text, c);
      expect([c, got]).toEqual([c, expected]);
    }
  });

  test("a __proto__ key is an own property, as JSON.parse makes it: nothing is polluted", () => {
    const v = parseInPieces('{"__proto__": {"polluted": true}}', [5]).value as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("multi-byte characters cut between chunks of bytes read whole", () => {
    const bytes = Buffer.from('{"s": "日本😀é"}', "utf8");
    for (let cut = 1; cut < bytes.length; cut++) {
      const p = new JsonStreamParser(WIDE);
      p.write(bytes.subarray(0, cut));
      p.write(bytes.subarray(cut));
      expect(p.end()).toEqual({ s: "日本😀é" });
    }
  });

  test("bounds: bytes (413), values, depth and string length (400), each as soon as it is passed", () => {
    const refuse = (text: string, bounds: Partial<JsonBounds>) => parseInPieces(text, [], { ...WIDE, ...bounds }).error;
    expect(refuse('{"a": "12345"}', { maxBytes: 13 })).toBe("PAYLOAD_TOO_LARGE");
    expect(refuse('{"a": "12345"}', { maxBytes: 14 })).toBeUndefined();
    expect(refuse("[1,2,3]", { maxValues: 3 })).toBe("INVALID");
    expect(refuse("[1,2,3]", { maxValues: 4 })).toBeUndefined();
    expect(refuse("[[[]]]", { maxDepth: 2 })).toBe("INVALID");
    expect(refuse("[[[]]]", { maxDepth: 3 })).toBeUndefined();
    expect(refuse('["123456"]', { maxStringChars: 5 })).toBe("INVALID");
    expect(refuse('["12345"]', { maxStringChars: 5 })).toBeUndefined();
    // Values are refused when they arrive: a body of a million empty objects stops at the bound.
    const p = new JsonStreamParser({ ...WIDE, maxValues: 1000 });
    p.write("[");
    expect(() => {
      for (let i = 0; i < 1_000_000; i++) p.write("{},");
    }).toThrow(/more than 1000 values/);
  });
});
