/** Keys and wraps (lib/domain/keys.ts): a registration's key bundle, and a wrap's size and signature for its vault type. */
import { randomBytes } from "node:crypto";
import { checkKeyBundle, checkWrap } from "../../../../lib/domain/keys";
import { b64, newUserKeys, registrationBundle, signWrap, wrapPersonal, wrapShared } from "../../../helpers/crypto";
import { code } from "../../../helpers/refusal";

describe("keys and wraps", () => {
  test("a bundle holds together, and wraps are checked for size and signature", async () => {
    const keys = await newUserKeys();
    const bundle = registrationBundle(keys);
    expect(code(() => checkKeyBundle(bundle))).toBe("ok");
    const vaultKey = randomBytes(32);
    const rsa = wrapShared(vaultKey, bundle.publicKey);
    const kw = wrapPersonal(vaultKey, keys.stretchedKey);
    const base = { holderPublicKey: bundle.publicKey, senderSigningPublicKey: bundle.signingPublicKey };
    expect(
      code(() =>
        checkWrap({ ...base, vaultType: "shared", encryptedVaultKey: b64(rsa), wrapSignature: b64(signWrap(rsa, keys.edPrivate)) }),
      ),
    ).toBe("ok");
    expect(
      code(() =>
        checkWrap({ ...base, vaultType: "personal", encryptedVaultKey: b64(kw), wrapSignature: b64(signWrap(kw, keys.edPrivate)) }),
      ),
    ).toBe("ok");
    expect(
      code(() => checkWrap({ ...base, vaultType: "shared", encryptedVaultKey: b64(kw), wrapSignature: b64(signWrap(kw, keys.edPrivate)) })),
    ).toBe("INVALID");
    expect(
      code(() =>
        checkWrap({ ...base, vaultType: "shared", encryptedVaultKey: b64(rsa), wrapSignature: b64(signWrap(kw, keys.edPrivate)) }),
      ),
    ).toBe("INVALID");
  });
});
