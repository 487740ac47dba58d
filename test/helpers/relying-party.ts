/**
 * A relying party for the extension's passkey tests: the routes test/fixtures/sites/passkeys.js
 * calls, served beside the fixture sites (`startFixtureSites({ routes })`), that make WebAuthn
 * options and verify registrations and sign-ins with @simplewebauthn/server, keeping each
 * credential's public key and counter, as a site's back end does.
 */
import type http from "node:http";
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type WebAuthnCredential,
} from "@simplewebauthn/server";

export interface RelyingParty {
  routes(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** The credentials registered, by id, with the account and the counter last verified. */
  credentials: Map<string, { credential: WebAuthnCredential; account: string; rpId: string }>;
  /** Every verdict, in order. */
  verdicts: Array<{ kind: "register" | "sign-in"; verified: boolean; error?: string }>;
}

export function relyingParty(): RelyingParty {
  const credentials: RelyingParty["credentials"] = new Map();
  const verdicts: RelyingParty["verdicts"] = [];
  const challenges = new Map<string, { challenge: string; account?: string }>();

  async function answer(path: string, host: string, body: any): Promise<unknown> {
    const hostname = new URL(`https://${host}`).hostname;
    const rpID: string = body.rp || hostname;
    const key = `${host} ${rpID}`;
    if (path === "/rp/register/options") {
      const options = await generateRegistrationOptions({
        rpName: "Acme Bank",
        rpID,
        userName: body.account,
        attestationType: "none",
        authenticatorSelection: { residentKey: "required", userVerification: "required" },
        excludeCredentials: [...credentials.values()]
          .filter((c) => c.rpId === rpID && c.account === body.account)
          .map((c) => ({ id: c.credential.id })),
        timeout: 10_000,
      });
      challenges.set(key, { challenge: options.challenge, account: body.account });
      return options;
    }
    if (path === "/rp/login/options") {
      const options = await generateAuthenticationOptions({ rpID, userVerification: "required", timeout: 10_000 });
      challenges.set(key, { challenge: options.challenge });
      return options;
    }
    const expected = challenges.get(key);
    challenges.delete(key);
    if (!expected) return { verified: false, error: "no challenge" };
    const common = {
      expectedChallenge: expected.challenge,
      expectedOrigin: `https://${host}`,
      expectedRPID: rpID,
      requireUserVerification: true,
    };
    if (path === "/rp/register/verify") {
      const verdict = await verifyRegistrationResponse({ response: body.credential, ...common });
      if (verdict.verified)
        credentials.set(verdict.registrationInfo.credential.id, {
          credential: verdict.registrationInfo.credential,
          account: expected.account!,
          rpId: rpID,
        });
      return { verified: verdict.verified };
    }
    const known = credentials.get(body.credential?.id);
    if (!known) return { verified: false, error: "unknown credential" };
    const verdict = await verifyAuthenticationResponse({ response: body.credential, credential: known.credential, ...common });
    if (verdict.verified) known.credential.counter = verdict.authenticationInfo.newCounter;
    return { verified: verdict.verified, account: known.account, counter: verdict.authenticationInfo.newCounter };
  }

  return {
    credentials,
    verdicts,
    routes(req, res) {
      const path = new URL(req.url ?? "/", "https://fixture").pathname;
      if (req.method !== "POST" || !path.startsWith("/rp/")) return false;
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const kind = path.startsWith("/rp/register") ? "register" : "sign-in";
        answer(path, req.headers.host ?? "", JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}"))
          .catch((err: Error) => ({ verified: false, error: err.message }))
          .then((out) => {
            if (path.endsWith("/verify")) verdicts.push({ kind, ...(out as { verified: boolean; error?: string }) });
            res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(out));
          });
      });
      return true;
    },
  };
}
