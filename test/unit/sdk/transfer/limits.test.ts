/**
 * What an import file may ask of this client (sdk/transfer/limits.ts), with real files made here:
 * KeePass databases made with kdbxweb whose headers ask for a chosen key derivation, whose
 * contents inflate as far as chosen; CSVs, Bitwarden exports and 1PUX zips past the caps. A file
 * past a cap is refused with an error naming the cap, before the work: the key-derivation cases
 * have a timeout of a few seconds, which the derivation they ask for would pass (over 7 s for
 * AES-KDF, minutes for Argon2) were the cap not checked first.
 */
import { randomUUID } from "node:crypto";
import Papa from "papaparse";
import { strToU8, zipSync } from "fflate";
import { keepassAsking } from "../../../helpers/keepass";
import { exportJson, IMPORT_LIMITS, ImportError, readImport } from "../../../../sdk/transfer";
import { importLimits } from "../../../../sdk/transfer/limits";

const bytes = (text: string) => new TextEncoder().encode(text);
/** A key derivation's cap must answer before the derivation could start: well under this. */
const BEFORE_ANY_DERIVATION = 3_000;

describe("KeePass: the key derivation the header asks for, checked before anything is derived", () => {
  const cap = IMPORT_LIMITS.aesKdfRounds;

  test.each([
    ["KDBX 3, one AES-KDF round past the cap", { version: 3, rounds: cap + 1 }],
    ["KDBX 4, one AES-KDF round past the cap", { version: 4, kdf: "aes", rounds: cap + 1 }],
    ["KDBX 4, 2^63 AES-KDF rounds (past what kdbxweb can count)", { version: 4, kdf: "aes", rounds: 2 ** 63 }],
  ] as const)(
    "%s: refused, naming the cap",
    async (_what, asking) => {
      const file = await keepassAsking("pw", asking);
      await expect(readImport(file, { password: "pw" })).rejects.toThrow(
        new ImportError(
          `the database asks for ${asking.rounds.toLocaleString("en-US")} AES-KDF rounds, more than the 100,000,000 this client runs: ` +
            "lower it in KeePass (Database settings, Security) and export again",
        ),
      );
    },
    BEFORE_ANY_DERIVATION,
  );

  test.each([
    ["memory past 1 GiB (1 TiB)", { memoryKiB: 2 ** 30 }],
    ["101 passes", { iterations: 101 }],
    ["17 lanes", { parallelism: 17 }],
    ["more than 16 GiB of memory passes (256 MiB, 65 times)", { memoryKiB: 256 * 1024, iterations: 65 }],
  ])(
    "KDBX 4, Argon2id with %s: refused, naming the caps",
    async (_what, cost) => {
      const file = await keepassAsking("pw", { version: 4, kdf: "argon2id", ...cost });
      const refused = readImport(file, { password: "pw" });
      await expect(refused).rejects.toThrow(ImportError);
      await expect(refused).rejects.toThrow(
        "this client runs at most 1,048,576 KiB, 100 passes, 16 lanes and 16,777,216 KiB of memory passes (memory times passes)",
      );
    },
    BEFORE_ANY_DERIVATION,
  );

  test("within the caps, KDBX 3 and KDBX 4 (AES-KDF and Argon2id) read", async () => {
    for (const asking of [{ version: 3 }, { version: 4, kdf: "aes" }, { version: 4, kdf: "argon2id" }] as const) {
      const parsed = await readImport(await keepassAsking("pw", { ...asking, entries: 2 }), { password: "pw" });
      expect([asking, parsed.items.map((i) => i.name)]).toEqual([asking, ["entry 0", "entry 1"]]);
    }
  });
});

describe("KeePass: what the database inflates to and the entries it holds", () => {
  const notes = "a".repeat(600 * 1024);

  test.each([3, 4] as const)("KDBX %i: a payload that inflates past the cap is refused as it inflates", async (version) => {
    const file = await keepassAsking("pw", { version, notes });
    expect(file.length).toBeLessThan(64 * 1024);
    await expect(readImport(file, { password: "pw", limits: { inflatedBytes: 256 * 1024 } })).rejects.toThrow(
      new ImportError(
        "the database inflates past 256 KiB, the most this client inflates from one file (a small file that expands without end is refused)",
      ),
    );
    expect((await readImport(file, { password: "pw" })).items[0]!.fields.notes).toBe(notes);
  });

  test("KDBX 3: a compressed attachment that inflates past the cap is refused before kdbxweb inflates it", async () => {
    const file = await keepassAsking("pw", { version: 3, compressedAttachment: new Uint8Array(2 * 1024 * 1024) });
    await expect(readImport(file, { password: "pw", limits: { inflatedBytes: 1024 * 1024 } })).rejects.toThrow(
      "an attachment of the database inflates past 1 MiB",
    );
    const parsed = await readImport(file, { password: "pw" });
    expect(parsed.items[0]!.files).toEqual([{ name: "big.bin", data: new Uint8Array(2 * 1024 * 1024) }]);
  });

  test("more entries than the cap are refused before they are built; the kept revisions of an entry do not count", async () => {
    const file = await keepassAsking("pw", { version: 4, entries: 4 });
    await expect(readImport(file, { password: "pw", limits: { entries: 3 } })).rejects.toThrow(
      new ImportError("the file holds more than 3 entries, the most one import (and, by default, one vault) takes: split it"),
    );
    expect((await readImport(file, { password: "pw", limits: { entries: 4 } })).items).toHaveLength(4);
  });
});

describe("the other formats", () => {
  test("a file past the size cap is refused before it is read, whatever its format", async () => {
    const csv = bytes(`name\n${"x\n".repeat(600)}`);
    await expect(readImport(csv, { limits: { fileBytes: 1024 } })).rejects.toThrow(
      new ImportError("the file is larger than 1 KiB, the most this client imports at once: split it"),
    );
    expect(IMPORT_LIMITS.fileBytes).toBe(64 * 1024 * 1024);
  });

  test("CSVs (a generic one, Bitwarden's): rows past the cap are refused; blank lines are not rows", async () => {
    const generic = Papa.unparse(Array.from({ length: 4 }, (_, i) => ({ name: `n${i}`, password: "p" }))) + "\n\n\n\n\n";
    const bitwarden = Papa.unparse(
      Array.from({ length: 4 }, (_, i) => ({ type: "login", name: `n${i}`, login_uri: "", login_username: "u", login_password: "p" })),
    );
    for (const csv of [generic, bitwarden]) {
      await expect(readImport(bytes(csv), { limits: { entries: 3 } })).rejects.toThrow("the file holds more than 3 entries");
      expect((await readImport(bytes(csv), { limits: { entries: 4 } })).items).toHaveLength(4);
    }
    expect(await readImport(bytes("name,password\n"), { limits: { entries: 3 } })).toEqual({
      format: "csv",
      items: [],
      partial: [],
      skipped: [],
    });
  });

  test("JSON exports (Bitwarden's, this service's): items past the cap are refused", async () => {
    const items = Array.from({ length: 4 }, (_, i) => ({ type: 1, name: `n${i}`, login: { username: "u" } }));
    const own = exportJson([{ name: "v", items: items.map((i) => ({ name: i.name, type: "login" as const, fields: { username: "u" } })) }]);
    for (const file of [JSON.stringify({ encrypted: false, items }), own]) {
      await expect(readImport(bytes(file), { limits: { entries: 3 } })).rejects.toThrow("the file holds more than 3 entries");
      expect((await readImport(bytes(file), { limits: { entries: 4 } })).items).toHaveLength(4);
    }
  });

  test.each([
    ["PBKDF2 past 2,000,000 iterations", { kdfType: 0, kdfIterations: 2_000_001 }, "asks for 2000001 PBKDF2 iterations: at most 2000000"],
    ["PBKDF2 iterations that are not a whole number", { kdfType: 0, kdfIterations: 600_000.5 }, "PBKDF2 iterations: at most 2000000"],
    ["PBKDF2 iterations as text", { kdfType: 0, kdfIterations: "600000" }, "PBKDF2 iterations: at most 2000000"],
    ["Argon2id over 2^40 MiB", { kdfType: 1, kdfIterations: 3, kdfMemory: 2 ** 40, kdfParallelism: 4 }, "1 to 1024 MiB"],
    ["Argon2id with 11 passes", { kdfType: 1, kdfIterations: 11, kdfMemory: 1, kdfParallelism: 1 }, "1 to 10 passes"],
    ["Argon2id with 17 lanes", { kdfType: 1, kdfIterations: 1, kdfMemory: 64, kdfParallelism: 17 }, "1 to 16 lanes"],
  ])(
    "a password-protected Bitwarden export asking for %s is refused before anything is derived",
    async (_what, kdf, message) => {
      const file = JSON.stringify({ encrypted: true, passwordProtected: true, salt: randomUUID(), ...kdf, data: "2.a|b|c" });
      const refused = readImport(bytes(file), { password: "p" });
      await expect(refused).rejects.toThrow(ImportError);
      await expect(refused).rejects.toThrow(message);
    },
    BEFORE_ANY_DERIVATION,
  );

  test("1Password's 1PUX: data that inflates past the cap is refused as it inflates; items past the cap are refused", async () => {
    const pux = (items: unknown[], pad = "") =>
      zipSync({
        "export.attributes": strToU8("{}"),
        "export.data": strToU8(JSON.stringify({ accounts: [{ vaults: [{ items }] }], pad })),
      });
    const item = (i: number) => ({ categoryUuid: "001", overview: { title: `n${i}` }, details: {} });
    const padded = pux([item(0)], "a".repeat(1024 * 1024));
    expect(padded.length).toBeLessThan(16 * 1024);
    await expect(readImport(padded, { limits: { inflatedBytes: 256 * 1024 } })).rejects.toThrow(
      "the 1Password export's data inflates past 256 KiB",
    );
    expect((await readImport(padded)).items.map((i) => i.name)).toEqual(["n0"]);
    const four = pux([0, 1, 2, 3].map(item));
    await expect(readImport(four, { limits: { entries: 3 } })).rejects.toThrow("the file holds more than 3 entries");
    expect((await readImport(four, { limits: { entries: 4 } })).items).toHaveLength(4);
  });
});

test("a caller may lower the caps, never raise them", () => {
  const raised = importLimits({ entries: 10 ** 9, argon2: { iterations: 10 ** 9 }, bitwarden: { pbkdf2Iterations: 10 ** 9 } });
  expect(raised).toEqual(IMPORT_LIMITS);
  const lowered = importLimits({ entries: 10, argon2: { memoryKiB: 1024 } });
  expect([lowered.entries, lowered.argon2.memoryKiB, lowered.argon2.iterations]).toEqual([10, 1024, IMPORT_LIMITS.argon2.iterations]);
});
