/**
 * The QR code the web vault shows for an authenticator app, in Debian's Chromium (playwright-core)
 * against the real service: read back from a screenshot of the page by jsQR, as a phone's camera
 * would, it holds the same otpauth address and secret as the text beside it, and a code computed
 * from the secret it holds enrols the app. The code's library is not part of the first page.
 */
import jsQR from "jsqr";
import type { Page } from "playwright-core";
import { SDK_PASSWORD } from "../helpers/sdk";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { webVaultSuite } from "../helpers/web-vault";

jest.setTimeout(180_000);

/**
 * What a QR code in a PNG says, read by jsQR. Chromium turns the PNG into pixels (the test's
 * TypeScript has no DOM types, hence the string); the vault's CSP does not stop it, as nothing is fetched.
 */
async function readQrCode(p: Page, png: Buffer): Promise<string | undefined> {
  const { width, height, rgba } = (await p.evaluate(`(async () => {
    const bytes = Uint8Array.from(atob("${png.toString("base64")}"), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/png" }));
    const context = new OffscreenCanvas(bitmap.width, bitmap.height).getContext("2d");
    context.drawImage(bitmap, 0, 0);
    const { data } = context.getImageData(0, 0, bitmap.width, bitmap.height);
    let text = "";
    for (let i = 0; i < data.length; i += 0x8000) text += String.fromCharCode(...data.subarray(i, i + 0x8000));
    return { width: bitmap.width, height: bitmap.height, rgba: btoa(text) };
  })()`)) as { width: number; height: number; rgba: string };
  return jsQR(new Uint8ClampedArray(Buffer.from(rgba, "base64")), width, height)?.data;
}

describe("the web vault: the QR code for an authenticator app", () => {
  // Served at localhost, as the other second-factor pages are (security keys need it).
  const suite = webVaultSuite({ localhost: true });

  test("scanned from the page, it holds the secret shown beside it, and a code from that secret enrols the app", async () => {
    const ada = await suite.registered();
    const address = ada.account.email;
    const p = await suite.page();
    const scripts: string[] = [];
    p.on("request", (r) => void (r.resourceType() === "script" && scripts.push(r.url())));

    await suite.logIn(p, address);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
    await p.getByRole("link", { name: "Security" }).click();
    await p.getByLabel(/^Master password \(to add/).fill(SDK_PASSWORD);
    await p.getByLabel("Name for a new factor").fill("Phone");
    const beforeEnrolment = scripts.length;
    await p.getByRole("button", { name: "Add an authenticator app" }).click();

    const qr = p.getByRole("img", { name: "QR code for your authenticator app" });
    await qr.waitFor();
    // The QR code's library came with the enrolment, not with the login page or the vault.
    expect(scripts.slice(beforeEnrolment).length).toBeGreaterThan(0);
    const scanned = await readQrCode(p, await qr.screenshot());
    const shownUri = await p.getByTestId("totp-uri").textContent();
    const shownSecret = await p.getByTestId("totp-secret").textContent();
    expect(scanned).toBe(shownUri);
    const uri = new URL(scanned!);
    expect({ scheme: uri.protocol, kind: uri.host, secret: uri.searchParams.get("secret") }).toEqual({
      scheme: "otpauth:",
      kind: "totp",
      secret: shownSecret,
    });
    expect(decodeURIComponent(uri.pathname)).toContain(address);
    await suite.accessible(p, "authenticator app with its QR code");

    await p.getByLabel("Code from the app").fill(referenceTotp(fromBase32(uri.searchParams.get("secret")!), Date.now()));
    await p.getByRole("button", { name: "Enrol the app" }).click();
    await p.getByTestId("factor-list").locator("li", { hasText: "Authenticator app: Phone" }).waitFor();
  });
});
