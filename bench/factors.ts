/**
 * `BENCH_PARTS=factors npm run bench`: what a second factor adds to a login through the SDK. Two
 * accounts on one server, one with an authenticator app, logged into alternately: the plain login
 * is the baseline measured in the same run; the other answers its second step (with a recovery
 * code, the one answer a script can give without waiting for the next TOTP step).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Secret, TOTP } from "otpauth";
import { loadConfig } from "../lib/config";
import { median, timed } from "./common";
import { startNode } from "../app/node";
import { MemoryPinStore, VaultClient } from "../sdk";

const ROUNDS = Number(process.env.BENCH_FACTORS_ROUNDS ?? 9);
const PASSWORD = "correct horse battery staple";

export async function factorFlows(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-factors-"));
  const node = await startNode(loadConfig({ PORT: "0", LOG_LEVEL: "warn", DATA_DIR: dataDir, REGISTRATION_MODE: "open" }));
  const baseUrl = `http://127.0.0.1:${node.port}/api/v1`;
  try {
    console.log("## Login with a second step, against a plain login (default KDF), alternated");
    const plain = new VaultClient({ baseUrl });
    await plain.register({ email: "bench-plain@example.test", password: PASSWORD, orgName: "Bench" });
    const guarded = new VaultClient({ baseUrl });
    await guarded.register({ email: "bench-2fa@example.test", password: PASSWORD, orgName: "Bench 2" });
    const setup = await guarded.factors.setupTotp();
    const code = new TOTP({ secret: Secret.fromBase32(setup.secret) }).generate();
    let codes = (await guarded.factors.confirmTotp(setup.setupToken, code, "App", PASSWORD)).recoveryCodes!;
    const plainMs: number[] = [];
    const stepMs: number[] = [];
    const pins = new MemoryPinStore();
    for (let i = 0; i < ROUNDS; i++) {
      if (codes.length === 0) codes = await guarded.factors.newRecoveryCodes(PASSWORD);
      const recoveryCode = codes.shift()!;
      const a = new VaultClient({ baseUrl, pins });
      plainMs.push(await timed(() => a.login("bench-plain@example.test", PASSWORD)));
      const b = new VaultClient({ baseUrl, pins, secondFactor: async () => ({ recoveryCode }) });
      stepMs.push(await timed(() => b.login("bench-2fa@example.test", PASSWORD)));
      await a.logout();
      await b.logout();
    }
    const base = median(plainMs);
    console.log(`plain login (baseline), median of ${ROUNDS}: ${base.toFixed(0)} ms`);
    console.log(`login with a second step, median: ${median(stepMs).toFixed(0)} ms; ratio ${(median(stepMs) / base).toFixed(2)}\n`);
  } finally {
    await node.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
