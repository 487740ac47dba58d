// The part of the punycode package lookalike.ts uses (the package ships no types); every tsconfig
// that covers sdk/ takes this file in. It is imported by its file, `punycode/punycode.js`: the
// bare name `punycode` is Node's deprecated built-in.
declare module "punycode/punycode.js" {
  const punycode: {
    /** `xn--` labels of a domain name decoded to Unicode; other labels as they are. Throws RangeError on a malformed label. */
    toUnicode(domain: string): string;
    toASCII(domain: string): string;
  };
  export = punycode;
}
