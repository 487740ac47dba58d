/**
 * What an owner administers in the web vault, in Debian's Chromium (playwright-core) against the
 * real service: every organization policy set on the Security page and read back through the SDK,
 * a change that would shut people out held until the owner sets it anyway, and an invite passed on
 * by mail or the share sheet without its link reaching the server. axe-core checks each new state.
 */
import type { Page } from "playwright-core";
import { ApiError } from "../../sdk";
import { POLICY_BOUNDS } from "../../web/src/pages/security/policy-form";
import { SDK_PASSWORD } from "../helpers/sdk";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { webVaultSuite } from "../helpers/web-vault";

jest.setTimeout(180_000);

describe("the web vault: policies and invites", () => {
  const suite = webVaultSuite();
  const { registered, accessible, email } = suite;
  const page = () => suite.page();
  async function logIn(p: Page, address: string) {
    await suite.logIn(p, address);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
  }
  async function securityPage(address: string): Promise<Page> {
    const p = await page();
    await logIn(p, address);
    await p.getByRole("link", { name: "Security" }).click();
    await p.getByRole("heading", { name: "Your organization's policies" }).waitFor();
    return p;
  }
  const lockOut = (p: Page) => p.getByTestId("policy-lock-out");

  test("an owner sets every policy on the Security page, and clears those that may be empty; the SDK reads back each", async () => {
    const ada = await registered();
    const carol = await registered("admin", ada);
    // An admin with a second factor: requiring one shuts no one who manages the organization out.
    const setup = await carol.factors.setupTotp();
    await carol.factors.confirmTotp(setup.setupToken, referenceTotp(fromBase32(setup.secret), Date.now()), "Phone", SDK_PASSWORD);
    const p = await securityPage(ada.account.email);
    await p.getByLabel("Argon2id memory (KiB)").fill("65536");
    await p.getByLabel("Argon2id passes").fill("3");
    await p.getByLabel("PBKDF2 iterations").fill("700000");
    await p.getByLabel("Longest invite").fill("72h");
    await p.getByLabel("Fewest recovery trustees").fill("3");
    await p.getByLabel("Least password strength").selectOption("4");
    await p.getByLabel("Idle lock (minutes)").fill("15");
    await p.getByRole("button", { name: "Save policies" }).click();
    await p.getByRole("status").filter({ hasText: "Policies saved." }).waitFor();
    expect(await carol.factors.policies()).toMatchObject({
      requireSecondFactor: false,
      minKdf: { argon2idMemoryKiB: 65536, argon2idIterations: 3, pbkdf2Iterations: 700_000 },
      inviteMaxLifetime: "72h",
      recoveryMinThreshold: 3,
      client: { minPasswordScore: 4, idleLockMinutes: 15 },
    });

    // Emptied, the least KDF, the longest invite and the idle lock go back to the server's defaults.
    for (const label of ["Argon2id memory (KiB)", "Argon2id passes", "PBKDF2 iterations", "Longest invite", "Idle lock (minutes)"])
      await p.getByLabel(label).fill("");
    // Ada has no second factor: the page says what requiring one does to her before anything is sent.
    await p.getByLabel("Require a second factor").check();
    await p.getByRole("button", { name: "Save policies" }).click();
    await expect(lockOut(p).textContent()).resolves.toContain(`you (${ada.account.email}) have no second factor`);
    expect(await carol.factors.policies()).toMatchObject({ requireSecondFactor: false, inviteMaxLifetime: "72h" });
    await p.getByRole("button", { name: "Set it anyway" }).click();
    await p.getByRole("status").filter({ hasText: "Policies saved." }).waitFor();
    const stored = await carol.factors.policies();
    expect(stored).toMatchObject({ requireSecondFactor: true, recoveryMinThreshold: 3, client: { minPasswordScore: 4 } });
    expect([stored.minKdf, stored.inviteMaxLifetime, stored.client.idleLockMinutes]).toEqual([undefined, undefined, undefined]);
  });

  test("a change that would shut people out names them, and is made only when the owner sets it anyway", async () => {
    const ada = await registered();
    const carol = await registered("admin", ada);
    const dan = await registered("admin", ada);
    const bob = await registered("member", ada);
    const p = await securityPage(ada.account.email);
    await p.getByLabel("Fewest recovery trustees").fill("3");
    await p.getByLabel("Longest invite").fill("10m");
    await p.getByRole("button", { name: "Save policies" }).click();
    const asked = (await lockOut(p).textContent())!;
    // Ada, Carol and Dan have two other owners or admins to choose as trustees; Bob, a member, has three.
    for (const shut of [ada, carol, dan]) expect(asked).toContain(shut.account.email);
    expect(asked).not.toContain(bob.account.email);
    expect(asked).toMatch(/Fewest recovery trustees: a recovery threshold of 3 needs 3 trustees/);
    expect(asked).toMatch(/Longest invite: invites lasting at most 10m expire before most people can redeem them/);
    await accessible(p, "a policy change that shuts people out");
    expect(await ada.factors.policies()).toMatchObject({ recoveryMinThreshold: 2 });
    expect((await ada.factors.policies()).inviteMaxLifetime).toBeUndefined();

    await p.getByRole("button", { name: "Set it anyway" }).click();
    await p.getByRole("status").filter({ hasText: "Policies saved." }).waitFor();
    expect(await ada.factors.policies()).toMatchObject({ recoveryMinThreshold: 3, inviteMaxLifetime: "10m" });

    // An admin reads the policies, and has nothing to change them with.
    const c = await securityPage(carol.account.email);
    await c.getByRole("row", { name: "Fewest recovery trustees 3 Enforced by the server" }).waitFor();
    expect(await c.getByRole("button", { name: "Save policies" }).count()).toBe(0);
  });

  test("requiring a second factor nobody who manages the organization has: asked here, then the server names who", async () => {
    const ada = await registered();
    const p = await securityPage(ada.account.email);
    await p.getByLabel("Require a second factor").check();
    await p.getByRole("button", { name: "Save policies" }).click();
    await expect(lockOut(p).textContent()).resolves.toContain(`you (${ada.account.email}) have no second factor`);
    await p.getByRole("button", { name: "Set it anyway" }).click();
    await lockOut(p)
      .filter({ hasText: `no owner or admin has a second factor (${ada.account.email})` })
      .waitFor();
    expect(await ada.factors.policies()).toMatchObject({ requireSecondFactor: false });
    await p.getByRole("button", { name: "Set it anyway" }).click();
    await p.getByRole("status").filter({ hasText: "Policies saved." }).waitFor();
    expect(await ada.factors.policies()).toMatchObject({ requireSecondFactor: true });
  });

  test("the form's bounds are the server's: every number at its bound is stored, one past it refused", async () => {
    const ada = await registered();
    const b = POLICY_BOUNDS;
    const at = (edge: "min" | "max", past?: [keyof typeof b, number]) => {
      const v = (key: keyof typeof b) => (past?.[0] === key ? past[1] : b[key][edge]);
      return {
        requireSecondFactor: false,
        minKdf: {
          argon2idMemoryKiB: v("argon2idMemoryKiB"),
          argon2idIterations: v("argon2idIterations"),
          pbkdf2Iterations: v("pbkdf2Iterations"),
        },
        recoveryMinThreshold: v("recoveryMinThreshold"),
        client: { minPasswordScore: v("minPasswordScore"), idleLockMinutes: v("idleLockMinutes") },
      };
    };
    for (const edge of ["min", "max"] as const) {
      await expect(ada.factors.setPolicies(at(edge))).resolves.toMatchObject(at(edge));
      for (const key of Object.keys(b) as Array<keyof typeof b>) {
        const past = edge === "min" ? b[key].min - 1 : b[key].max + 1;
        const refused = await ada.factors.setPolicies(at(edge, [key, past])).catch((err: unknown) => err);
        expect({ key, past, refused }).toEqual({ key, past, refused: expect.any(ApiError) });
        expect({ key, past, status: (refused as ApiError).status }).toEqual({ key, past, status: 400 });
      }
    }
  });

  test("an invite sent by email or the share sheet: the link is built here, and no request carries it", async () => {
    const ada = await registered();
    const bobEmail = email("bob");
    const p = await page();
    // Chromium on Linux has no share sheet: a stand-in records what the page would hand one. (Page code
    // as text: this file is type-checked without the DOM library.)
    await p.addInitScript(`Object.defineProperty(navigator, "share", { value: async (data) => void (window.__shared = data) })`);
    const sent: string[] = [];
    p.on("request", (r) => void sent.push(`${r.method()} ${r.url()} ${r.postData() ?? ""}`));
    await logIn(p, ada.account.email);
    await p.getByRole("link", { name: "Invites" }).click();
    await p.getByLabel("Their email").fill(bobEmail);
    await p.getByRole("button", { name: "Create invite" }).click();
    const link = (await p.getByTestId("invite-link").textContent())!;
    const href = (await p.getByRole("link", { name: "Send by email" }).getAttribute("href"))!;
    const mail = new URL(href);
    expect([mail.protocol, decodeURIComponent(mail.pathname)]).toEqual(["mailto:", bobEmail]);
    expect(mail.searchParams.get("subject")).toBe("Your invitation to Acme");
    expect(mail.searchParams.get("body")!.split("\r\n")).toContain(link);
    await p.getByRole("button", { name: "Share…" }).click();
    const shared = await p.evaluate<{ text?: string } | undefined>(`window.__shared`);
    expect(shared?.text?.split("\n")).toContain(link);
    await accessible(p, "an invite link with its ways to send it");

    // The link's secret travels in its fragment, which no request holds: not the page's, nor the API's.
    const secret = link.split("#/invite/")[1]!.split(".")[1]!;
    expect(sent.some((r) => r.includes("POST") && r.includes("/invites"))).toBe(true);
    expect(sent.filter((r) => r.includes(secret) || r.includes(encodeURIComponent(link)))).toEqual([]);
  });
});
