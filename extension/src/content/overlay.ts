/**
 * The inline menu and the offer bar as drawn into a page: the extension's menu.html in a frame,
 * inside a closed shadow root on a host element the content script made. The page's scripts get
 * no reference to the shadow root (it is closed, and this script's objects live in an isolated
 * world), cannot read the frame (another origin), and cannot click in it for the user (events
 * they make are not trusted, and the menu ignores them). What the page can still do is move or
 * cover the host: the fill checks first that the menu is on top and whole (`covered`).
 */
const ROW_PX = 44;

/** The elements this script put into the page: they do not hide a field from the person (the menu under a username lies over the password). */
const ours = new Set<Element>();
export const isOurs = (el: Element | null): boolean => el !== null && ours.has(el);
const MENU_WIDTH_PX = 320;
/** As long as the menu page waits before it takes a click (menu/menu.tsx). */
const SETTLE_MS = 400;

export class Overlay {
  private host: HTMLElement | undefined;
  private frame: HTMLIFrameElement | undefined;
  private anchor: HTMLElement | undefined;
  private height = 0;
  /** Where `place` put the host last, and when: the page did not move it if it is still there, and a click right after a move is refused. */
  private placed = { top: 0, left: 0, at: 0 };
  /** Closes the menu on any change to its host the content script did not make (a page restyling, moving or re-parenting it). */
  private watcher: MutationObserver | undefined;
  private ownStyle = "";
  private readonly follow = () => this.place();

  constructor(private readonly purpose: "menu" | "offer" | "passkey") {}

  get shown(): boolean {
    return this.host?.isConnected === true;
  }

  /** Draws menu.html for `token` under `anchor` (the menu) or at the top right (the offer bar), `rows` tall. */
  open(token: string, anchor: HTMLElement | undefined, rows: number): void {
    this.close();
    const host = document.createElement("div");
    const root = host.attachShadow({ mode: "closed" });
    const frame = document.createElement("iframe");
    frame.src = `${chrome.runtime.getURL("menu.html")}#${token}`;
    frame.title = { menu: "Vault: logins for this site", offer: "Vault: save this login", passkey: "Vault: passkey for this site" }[
      this.purpose
    ];
    frame.allow = "clipboard-write";
    frame.setAttribute("style", "border:0;width:100%;height:100%;display:block;color-scheme:light;background:#fff;");
    root.append(frame);
    const height = Math.min(16 + rows * ROW_PX, 320);
    this.height = height;
    host.setAttribute(
      "style",
      [
        "all:initial",
        "position:fixed",
        "z-index:2147483647",
        `width:${MENU_WIDTH_PX}px`,
        `height:${height}px`,
        "opacity:1",
        "visibility:visible",
        "display:block",
        "border:1px solid #767676",
        "border-radius:6px",
        "box-shadow:0 4px 16px rgba(0,0,0,.25)",
        "background:#fff",
        "overflow:hidden",
      ]
        .map((rule) => `${rule} !important`)
        .join(";"),
    );
    this.host = host;
    ours.add(host);
    this.frame = frame;
    this.anchor = anchor;
    document.documentElement.append(host);
    this.place();
    this.watcher = new MutationObserver(() => {
      if (host.getAttribute("style") !== this.ownStyle || host.parentNode !== document.documentElement || host.attributes.length !== 1)
        this.close();
    });
    this.watcher.observe(host, { attributes: true });
    this.watcher.observe(document.documentElement, { childList: true });
    addEventListener("scroll", this.follow, true);
    addEventListener("resize", this.follow);
  }

  private place(): void {
    if (!this.host) return;
    // Changed by someone else since it was placed: closed, not put back.
    if (this.ownStyle && this.host.getAttribute("style") !== this.ownStyle) return this.close();
    const style = this.host.style;
    const was = { top: style.top, left: style.left, right: style.right };
    if (!this.anchor) {
      style.setProperty("top", "12px", "important");
      style.setProperty("right", "12px", "important");
    } else this.beside(this.anchor);
    this.ownStyle = this.host.getAttribute("style") ?? "";
    const rect = this.host.getBoundingClientRect();
    const moved = was.top !== style.top || was.left !== style.left || was.right !== style.right;
    this.placed = { top: rect.top, left: rect.left, at: moved ? Date.now() : this.placed.at };
  }

  private beside(anchor: HTMLElement): void {
    const style = this.host!.style;
    const rect = anchor.getBoundingClientRect();
    const left = Math.max(4, Math.min(rect.left, innerWidth - MENU_WIDTH_PX - 4));
    // Below the field, or above it where the page ends first.
    const top =
      rect.bottom + 4 + this.height > innerHeight && rect.top - 4 - this.height >= 0 ? rect.top - 4 - this.height : rect.bottom + 4;
    style.setProperty("top", `${Math.round(top)}px`, "important");
    style.setProperty("left", `${Math.round(left)}px`, "important");
  }

  /**
   * Whether the page hid or covered the menu, so a click on it may not have been meant for it:
   * the host moved out of the document, made transparent or invisible, or something else on top
   * at its centre and its corners.
   */
  covered(): boolean {
    const host = this.host;
    if (!host?.isConnected || !this.frame) return true;
    const now = host.getBoundingClientRect();
    // Moved by the page, or moved (following its field) a moment ago: the click was aimed elsewhere.
    if (Math.abs(now.top - this.placed.top) > 1 || Math.abs(now.left - this.placed.left) > 1) return true;
    if (Date.now() - this.placed.at < SETTLE_MS) return true;
    const style = getComputedStyle(host);
    if (style.visibility !== "visible" || style.display === "none" || Number(style.opacity) < 1) return true;
    for (let el = host.parentElement; el; el = el.parentElement) if (Number(getComputedStyle(el).opacity) < 1) return true;
    const r = host.getBoundingClientRect();
    const points = [
      [r.left + r.width / 2, r.top + r.height / 2],
      [r.left + 4, r.top + 4],
      [r.right - 4, r.top + 4],
      [r.left + 4, r.bottom - 4],
      [r.right - 4, r.bottom - 4],
    ];
    const inView = points.filter(([x, y]) => x! >= 0 && y! >= 0 && x! < innerWidth && y! < innerHeight);
    return inView.length === 0 || inView.some(([x, y]) => document.elementFromPoint(x!, y!) !== host);
  }

  close(): void {
    this.ownStyle = "";
    this.watcher?.disconnect();
    this.watcher = undefined;
    if (this.host) ours.delete(this.host);
    this.host?.remove();
    this.host = undefined;
    this.frame = undefined;
    this.anchor = undefined;
    removeEventListener("scroll", this.follow, true);
    removeEventListener("resize", this.follow);
  }
}
