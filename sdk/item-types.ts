/**
 * What an item holds, by type: a login (username, password, several websites each with
 * a match rule, a TOTP seed), a secure note, a card, an identity, an SSH key; custom fields on any;
 * a favourite mark. All of it is inside the item's ciphertext: the server still stores opaque
 * blobs and cannot tell one type from another.
 *
 * The sealed data (`encryptedData`, opened) is JSON. Items of earlier releases hold a flat object
 * of strings (`{ "username": ..., "password": ..., "url": ..., "notes": ... }`): they open as
 * logins, their `url` as their one website. Items written now hold
 * `{ "v": 2, "type", "fields", "urls"?, "totp"?, "custom"?, "favorite"?, "tags"?, "archived"?, "passkeys"?, "attachments"? }`.
 * Tags, the archived mark, passkeys and attachments are written only when set, so an item without them seals as
 * it did before.
 */
import { checkedPasskeys, type Passkey } from "./passkeys/passkey";
import { checkedAttachments, type ItemAttachment } from "./attachments/attachment";

export const ITEM_TYPES = ["login", "note", "card", "identity", "ssh"] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

/** How a website matches a page a client fills in (the peers' rules; shown, and used by autofill clients). */
export const URL_MATCHES = ["domain", "host", "startsWith", "exact", "never"] as const;
export type UrlMatch = (typeof URL_MATCHES)[number];

export interface ItemUrl {
  url: string;
  match: UrlMatch;
}

export interface CustomField {
  name: string;
  value: string;
  /** Shown masked, like a password. */
  hidden: boolean;
}

export interface ItemContent {
  name: string;
  /** The type's fields (see TYPE_FIELDS), by key; items of earlier releases may hold any. */
  fields: Record<string, string>;
  /** Default: login. */
  type?: ItemType;
  /** A login's websites, the first its main one. */
  urls?: ItemUrl[];
  /** A login's TOTP seed: an `otpauth://totp/...` URI or a base32 secret (sdk/totp.ts). */
  totp?: string;
  custom?: CustomField[];
  favorite?: boolean;
  /**
   * Labels to find and group items by (a folder path is one tag, written with "/": `Work/Servers`).
   * Each trimmed and non-empty, at most MAX_TAG_LENGTH characters, at most MAX_TAGS of them, no
   * two alike, in the order given (`checkedTags`).
   */
  tags?: string[];
  /** Kept, but out of the everyday list. */
  archived?: boolean;
  /** A login's passkeys for its site (sdk/passkeys/passkey.ts): sealed with the rest, private keys included. */
  passkeys?: Passkey[];
  /** Files on the item (sdk/attachments/attachment.ts): each one's name, size and key, sealed with the rest; the chunks are on the server. */
  attachments?: ItemAttachment[];
}

export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 100;

/** Tags as an item holds them: trimmed, empty ones and repeats dropped, order kept; throws past the caps. */
export function checkedTags(tags: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const t of tags) {
    if (typeof t !== "string") throw new Error("a tag is not text");
    const tag = t.trim();
    if (tag === "" || out.includes(tag)) continue;
    if ([...tag].length > MAX_TAG_LENGTH) throw new Error(`a tag is longer than ${MAX_TAG_LENGTH} characters`);
    out.push(tag);
  }
  if (out.length > MAX_TAGS) throw new Error(`more than ${MAX_TAGS} tags`);
  return out;
}

/** One field of a type: its key in `fields`, its label, and how it is shown. */
export interface TypeField {
  key: string;
  label: string;
  secret?: boolean;
  multiline?: boolean;
}

const NOTES: TypeField = { key: "notes", label: "Notes", multiline: true };

/** Each type's fields, in the order clients show them. */
export const TYPE_FIELDS: Record<ItemType, readonly TypeField[]> = {
  login: [{ key: "username", label: "Username" }, { key: "password", label: "Password", secret: true }, NOTES],
  note: [NOTES],
  card: [
    { key: "cardholder", label: "Cardholder" },
    { key: "number", label: "Number", secret: true },
    { key: "expiry", label: "Expiry (MM/YY)" },
    { key: "code", label: "Security code", secret: true },
    NOTES,
  ],
  identity: [
    { key: "fullName", label: "Full name" },
    { key: "email", label: "Email" },
    { key: "phone", label: "Phone" },
    { key: "address", label: "Address", multiline: true },
    NOTES,
  ],
  ssh: [
    { key: "privateKey", label: "Private key", secret: true, multiline: true },
    { key: "publicKey", label: "Public key", multiline: true },
    { key: "passphrase", label: "Passphrase", secret: true },
    NOTES,
  ],
};

export const TYPE_LABELS: Record<ItemType, string> = {
  login: "Login",
  note: "Secure note",
  card: "Card",
  identity: "Identity",
  ssh: "SSH key",
};

/** A login's websites: its `urls`, or (an item of an earlier release) its one `url` field. */
export function itemUrls(item: Pick<ItemContent, "urls" | "fields">): ItemUrl[] {
  if (item.urls) return item.urls;
  const url = item.fields.url;
  return url ? [{ url, match: "domain" }] : [];
}

/** The data an item seals: always the current form. */
export function itemDataJson(content: ItemContent): string {
  return JSON.stringify({
    v: 2,
    type: content.type ?? "login",
    fields: content.fields,
    ...(content.urls && content.urls.length > 0 && { urls: content.urls }),
    ...(content.totp && { totp: content.totp }),
    ...(content.custom && content.custom.length > 0 && { custom: content.custom }),
    ...(content.favorite && { favorite: true }),
    ...(content.tags && content.tags.length > 0 && { tags: content.tags }),
    ...(content.archived && { archived: true }),
    ...(content.passkeys && content.passkeys.length > 0 && { passkeys: content.passkeys }),
    ...(content.attachments && content.attachments.length > 0 && { attachments: content.attachments }),
  });
}

const isStringMap = (v: unknown): v is Record<string, string> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === "string");

/** An item's opened data, in either form; throws (the caller names it) when it is neither. */
export function parseItemData(name: string, json: string): ItemContent {
  const data: unknown = JSON.parse(json);
  if (isStringMap(data)) return { name, fields: data, type: "login" };
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw new Error("item data is not an object");
  const d = data as Record<string, unknown>;
  if (d.v !== 2) throw new Error(`item data of an unknown form (${String(d.v)})`);
  if (!ITEM_TYPES.includes(d.type as ItemType)) throw new Error(`unknown item type ${String(d.type)}`);
  if (!isStringMap(d.fields)) throw new Error("item fields are not strings");
  const content: ItemContent = { name, fields: d.fields, type: d.type as ItemType };
  if (d.urls !== undefined) {
    if (!Array.isArray(d.urls)) throw new Error("urls is not a list");
    content.urls = d.urls.map((u: unknown) => {
      const { url, match } = (u ?? {}) as Record<string, unknown>;
      if (typeof url !== "string" || !URL_MATCHES.includes(match as UrlMatch)) throw new Error("a website is not { url, match }");
      return { url, match: match as UrlMatch };
    });
  }
  if (d.totp !== undefined) {
    if (typeof d.totp !== "string") throw new Error("totp is not text");
    content.totp = d.totp;
  }
  if (d.custom !== undefined) {
    if (!Array.isArray(d.custom)) throw new Error("custom is not a list");
    content.custom = d.custom.map((c: unknown) => {
      const { name: n, value, hidden } = (c ?? {}) as Record<string, unknown>;
      if (typeof n !== "string" || typeof value !== "string" || typeof hidden !== "boolean")
        throw new Error("a custom field is not { name, value, hidden }");
      return { name: n, value, hidden };
    });
  }
  if (d.favorite !== undefined) {
    if (typeof d.favorite !== "boolean") throw new Error("favorite is not true or false");
    content.favorite = d.favorite;
  }
  if (d.tags !== undefined) {
    if (!Array.isArray(d.tags)) throw new Error("tags is not a list");
    const tags = checkedTags(d.tags);
    if (tags.length > 0) content.tags = tags;
  }
  if (d.archived !== undefined) {
    if (typeof d.archived !== "boolean") throw new Error("archived is not true or false");
    content.archived = d.archived;
  }
  if (d.passkeys !== undefined) {
    if (content.type !== "login") throw new Error("passkeys on an item that is not a login");
    const passkeys = checkedPasskeys(d.passkeys);
    if (passkeys.length > 0) content.passkeys = passkeys;
  }
  if (d.attachments !== undefined) {
    const attachments = checkedAttachments(d.attachments);
    if (attachments.length > 0) content.attachments = attachments;
  }
  return content;
}

/**
 * Content from elsewhere (a file being imported) in exactly the form items hold, or an Error saying
 * what is wrong with it. Its tags are tidied first (trimmed, repeats dropped), as `checkedTags` does.
 */
export function checkedContent(c: ItemContent): ItemContent {
  if (typeof c.name !== "string" || c.name.trim() === "") throw new Error("it has no name");
  const tags = Array.isArray(c.tags) ? checkedTags(c.tags) : c.tags;
  return parseItemData(c.name, itemDataJson({ ...c, ...(tags !== undefined && { tags }) }));
}
