/**
 * A JSON body parsed as it arrives, within bounds. The rekey route's body may be 64 MiB:
 * read whole and handed to `JSON.parse`, 64 MiB of `[{},{},...]` is 22 million objects, 12 s of a
 * blocked event loop and 4 GiB of heap. Parsed here chunk by chunk, each chunk costs about its own
 * length, nothing is held but the value being built, and the body is refused (400) as soon as it
 * holds more values, deeper nesting or a longer string than any legitimate body can, and (413) as
 * soon as it is larger than the limit.
 *
 * What it accepts is exactly JSON (RFC 8259, as `JSON.parse` reads it) whose top level is an object
 * or an array, as body-parser's strict mode; an object's `__proto__` key is an own property.
 */
import { StringDecoder } from "node:string_decoder";
import { invalid, tooLarge } from "../errors";

export interface JsonBounds {
  /** Bytes of the body (413 past it). */
  maxBytes: number;
  /** Values of every kind, containers included (400 past it). */
  maxValues: number;
  /** Nesting of arrays and objects (400 past it). */
  maxDepth: number;
  /** Characters of one string as written, escapes included (400 past it). */
  maxStringChars: number;
}

const notJson = () => invalid("Request body is not valid JSON");

type Container = Record<string, unknown> | unknown[];
interface Frame {
  value: Container;
  isArray: boolean;
  key?: string;
}

const enum Expect {
  /** The first token: `{` or `[`. */
  Root,
  Value,
  /** After `[`: a value or `]`. */
  ValueOrClose,
  /** After `{`: a key or `}`. */
  KeyOrClose,
  /** After `,` in an object. */
  Key,
  Colon,
  CommaOrClose,
  Done,
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** The characters a number or a literal is made of. */
const ATOM_CHAR = /[0-9a-zA-Z+\-.]/;
const MAX_ATOM = 64;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export class JsonStreamParser {
  private readonly decoder = new StringDecoder("utf8");
  private readonly stack: Frame[] = [];
  private expect = Expect.Root;
  private root: unknown = undefined;
  private bytes = 0;
  private values = 0;
  /** A string read in parts (it goes on past a piece of the body): its parts so far, the backslashes that end the last part. */
  private str: { parts: string[]; chars: number; trailingBackslashes: number; isKey: boolean } | null = null;
  /** A number or literal being read. */
  private atom: string | null = null;
  private sawAny = false;

  constructor(private readonly bounds: JsonBounds) {}

  /** Takes the next piece of the body; throws the body's error (400 or 413) as soon as it is known. */
  write(chunk: string | Buffer): void {
    const text = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    this.bytes += typeof chunk === "string" ? Buffer.byteLength(chunk, "utf8") : chunk.length;
    if (this.bytes > this.bounds.maxBytes) throw tooLarge();
    this.parse(text);
  }

  /** The value, once the whole body is in: undefined for an empty body. */
  end(): unknown {
    this.parse(this.decoder.end());
    if (this.atom !== null) this.finishAtom();
    if (!this.sawAny) return undefined;
    if (this.expect !== Expect.Done || this.str) throw notJson();
    return this.root;
  }

  private parse(text: string): void {
    let i = 0;
    const n = text.length;
    while (i < n) {
      if (this.str) {
        i = this.continueString(text, i);
        continue;
      }
      if (this.atom !== null) {
        if (ATOM_CHAR.test(text[i]!)) {
          this.atom += text[i]!;
          if (this.atom.length > MAX_ATOM) throw notJson();
          i++;
          continue;
        }
        this.finishAtom();
        continue;
      }
      const c = text.charCodeAt(i);
      if (isSpace(c)) {
        i++;
        continue;
      }
      this.sawAny = true;
      i = this.token(text, i, c);
    }
  }

  /** One token starting at `text[i]` (not a space); returns where the next begins. */
  private token(text: string, i: number, c: number): number {
    switch (this.expect) {
      case Expect.Done:
        throw notJson();
      case Expect.Colon:
        if (c !== 0x3a) throw notJson();
        this.expect = Expect.Value;
        return i + 1;
      case Expect.CommaOrClose: {
        const top = this.stack[this.stack.length - 1]!;
        if (c === 0x2c) {
          this.expect = top.isArray ? Expect.Value : Expect.Key;
          return i + 1;
        }
        if (c === (top.isArray ? 0x5d : 0x7d)) return this.close(i);
        throw notJson();
      }
      case Expect.KeyOrClose:
      case Expect.Key:
        if (c === 0x7d && this.expect === Expect.KeyOrClose) return this.close(i);
        if (c !== 0x22) throw notJson();
        return this.stringStart(text, i, true);
      case Expect.ValueOrClose:
        if (c === 0x5d) return this.close(i);
        return this.valueStart(text, i, c);
      case Expect.Root:
        if (c !== 0x7b && c !== 0x5b) throw notJson();
        return this.valueStart(text, i, c);
      case Expect.Value:
        return this.valueStart(text, i, c);
    }
  }

  private valueStart(text: string, i: number, c: number): number {
    if (c === 0x7b || c === 0x5b) {
      const isArray = c === 0x5b;
      const value: Container = isArray ? [] : {};
      this.count();
      if (this.stack.length >= this.bounds.maxDepth) throw invalid(`The request body is nested deeper than ${this.bounds.maxDepth} levels`);
      this.attach(value);
      this.stack.push({ value, isArray });
      this.expect = isArray ? Expect.ValueOrClose : Expect.KeyOrClose;
      return i + 1;
    }
    if (c === 0x22) return this.stringStart(text, i, false);
    if (ATOM_CHAR.test(text[i]!)) {
      this.atom = "";
      return i;
    }
    throw notJson();
  }

  /**
   * A string whose opening quote is `text[i]`; returns where reading goes on. One that ends in this
   * piece of the body (nearly every string) is read in one step; one that goes on past it, or whose
   * closing quote may be escaped, is read in parts.
   */
  private stringStart(text: string, i: number, isKey: boolean): number {
    const q = text.indexOf('"', i + 1);
    if (q === -1 || text.charCodeAt(q - 1) === 0x5c) {
      this.str = { parts: [], chars: 0, trailingBackslashes: 0, isKey };
      return i + 1;
    }
    if (q - i - 1 > this.bounds.maxStringChars) throw this.tooLong();
    this.stringValue(text.slice(i, q + 1), isKey);
    return q + 1;
  }

  private tooLong(): Error {
    return invalid(`A string in the request body is longer than ${this.bounds.maxStringChars} characters`);
  }

  private close(i: number): number {
    this.stack.pop();
    this.expect = this.stack.length === 0 ? Expect.Done : Expect.CommaOrClose;
    return i + 1;
  }

  private count(): void {
    if (++this.values > this.bounds.maxValues)
      throw invalid(`The request body holds more than ${this.bounds.maxValues} values, more than any request of this route needs`);
  }

  /** Puts a value in its place: the root, the array's end, or the object's pending key. */
  private attach(value: unknown): void {
    const top = this.stack[this.stack.length - 1];
    if (!top) {
      this.root = value;
      return;
    }
    if (top.isArray) (top.value as unknown[]).push(value);
    else {
      const key = top.key!;
      if (key === "__proto__") Object.defineProperty(top.value, key, { value, writable: true, enumerable: true, configurable: true });
      else (top.value as Record<string, unknown>)[key] = value;
    }
  }

  private scalar(value: unknown): void {
    this.count();
    this.attach(value);
    this.expect = Expect.CommaOrClose;
  }

  private finishAtom(): void {
    const a = this.atom!;
    this.atom = null;
    if (a === "true") this.scalar(true);
    else if (a === "false") this.scalar(false);
    else if (a === "null") this.scalar(null);
    else if (NUMBER.test(a)) this.scalar(Number(a));
    else throw notJson();
  }

  /** Reads on in a string from `text[i]`; returns where reading goes on. */
  private continueString(text: string, i: number): number {
    const s = this.str!;
    const start = i;
    let from = i;
    for (;;) {
      const q = text.indexOf('"', from);
      const end = q === -1 ? text.length : q;
      if (s.chars + (end - start) > this.bounds.maxStringChars) throw this.tooLong();
      if (q === -1) {
        const part = text.slice(start);
        s.trailingBackslashes = trailingBackslashes(part, start === 0 ? s.trailingBackslashes : 0, part.length);
        this.addPart(part);
        return text.length;
      }
      // A quote ends the string unless an odd run of backslashes escapes it.
      let run = 0;
      while (q - 1 - run >= start && text.charCodeAt(q - 1 - run) === 0x5c) run++;
      if (q - run === start && start === 0) run += s.trailingBackslashes;
      if (run % 2 === 1) {
        from = q + 1;
        continue;
      }
      this.addPart(text.slice(start, q));
      this.finishString();
      return q + 1;
    }
  }

  private addPart(part: string): void {
    const s = this.str!;
    if (part.length === 0) return;
    s.parts.push(part);
    s.chars += part.length;
  }

  private finishString(): void {
    const s = this.str!;
    this.str = null;
    this.stringValue(`"${s.parts.join("")}"`, s.isKey);
  }

  /**
   * A string's value from its text, quotes included: `JSON.parse` reads its escapes and refuses a
   * control character or a malformed escape, about twice as fast as a pattern looking for control
   * characters alone (a 10,000-item rekey holds 20,000 strings of kilobytes).
   */
  private stringValue(quoted: string, isKey: boolean): void {
    let value: string;
    try {
      value = JSON.parse(quoted) as string;
    } catch {
      throw notJson();
    }
    if (isKey) {
      this.stack[this.stack.length - 1]!.key = value;
      this.expect = Expect.Colon;
    } else this.scalar(value);
  }
}

/** Backslashes that end `part` (continuing `carried` when all of it is backslashes). */
function trailingBackslashes(part: string, carried: number, length: number): number {
  let run = 0;
  while (run < length && part.charCodeAt(length - 1 - run) === 0x5c) run++;
  return run === length ? carried + run : run;
}
