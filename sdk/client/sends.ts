/**
 * `client.sends`: a text or a file shared with anyone who holds a link (design: docs/design/sends.md).
 * Everything is sealed here under a key derived from a secret that only the link carries, in its
 * fragment (protocol/formats/sends.ts): the server is handed the sealed parts, their sizes, the
 * lifetime and views asked for, and a proof of the password, never the secret, the password, the
 * title or the text. The sender's list opens each send's owner note (sealed to the sender's own
 * key) for its title and link.
 */
import { toBase64, type Bytes } from "../../protocol/encoding";
import { randomBytes } from "../../protocol/crypto/primitives";
import { chunkPlainBytes } from "../../protocol/formats/attachments";
import {
  MAX_SEND_HEADER_BYTES,
  SEND_PART_BYTES,
  SEND_PART_OVERHEAD,
  deriveSendKeys,
  headerBytes,
  parseSendLink,
  sealSendPart,
  secretText,
  sendLinkOf,
  sendPartCount,
  type SendHeader,
} from "../../protocol/formats/sends";
import { fromBase64Url } from "../../protocol/encoding";
import { openOwnerNote, sealOwnerNote } from "../sends/owner-note";
import type { ClientCore } from "./core";
import { retrying } from "./retrying";

/** What a send holds: a text, or a file's bytes with its name and media type. */
export type SendContent = { text: string } | { file: { name: string; type?: string; data: Bytes } };

export interface SendOptions {
  /** What the recipient sees it called; by default the file's name, or "A secret". */
  title?: string;
  /** How long it lives, like "1h", "3d" (a week by default; the server's and the organization's caps apply). */
  expiresIn?: string;
  /** How many times its link opens it, at most (no cap by default). */
  maxViews?: number;
  /** A password the recipient must type as well; give it to them apart from the link. */
  password?: string;
  /** Name the sender (this account's email) in the sealed header: the recipient sees who sent it. */
  showEmail?: boolean;
  /** The web vault's address the link opens (by default the API's, without `/api/v1`). */
  linkBase?: string;
  onProgress?: (sent: number, parts: number) => void;
}

/** A send made: its link (the only place its secret is) and when it expires. */
export interface MadeSend {
  sendId: string;
  link: string;
  expiresAt: string;
}

/** A send as its sender lists it. Its title and link are null when its note does not open (sealed before this account's keys were rotated). */
export interface SendSummary {
  sendId: string;
  title: string | null;
  kind: SendHeader["kind"] | null;
  link: string | null;
  views: number;
  maxViews: number | null;
  hasPassword: boolean;
  createdAt: string;
  expiresAt: string;
  /** Finished: its link opens it (an unfinished one was broken off, and the sweeper deletes it). */
  complete: boolean;
  /** Its last view was taken: its parts are gone. */
  partsGone: boolean;
}

interface ServerSend {
  sendId: string;
  views: number;
  maxViews: number | null;
  hasPassword: boolean;
  ownerNote: string;
  createdAt: string;
  expiresAt: string;
  complete: boolean;
  partsGone: boolean;
}

const DEFAULT_TEXT_TITLE = "A secret";

export class Sends {
  constructor(private readonly core: ClientCore) {}

  /** The web vault's address links open, by default. */
  get linkBase(): string {
    return this.core.http.baseUrl.replace(/\/api\/v1$/, "");
  }

  /** Seals and uploads a send (each part sent again while the server is away), then finishes it; answers its link. */
  async create(content: SendContent, opts: SendOptions = {}): Promise<MadeSend> {
    const keys = this.core.requireKeys();
    const sendId = globalThis.crypto.randomUUID();
    const secret = randomBytes(32);
    const header = headerOf(content, opts, this.core.account.email);
    const plainHeader = headerBytes(header);
    if (plainHeader.length > MAX_SEND_HEADER_BYTES) throw new Error("This text is too long for a send (at most 1 MiB)");
    const { contentKey, accessProof, passwordProof } = await deriveSendKeys(secret, sendId, opts.password);
    const parts = sendPartCount(header);
    const fileBytes = "file" in content ? content.file.data.length : 0;
    const bytes = plainHeader.length + fileBytes + parts * SEND_PART_OVERHEAD;
    const ownerNote = await sealOwnerNote(keys, sendId, {
      title: header.title,
      kind: header.kind,
      secret: secretText(secret),
    });
    const made = await this.core.http.request<{ expiresAt: string }>("POST", "/sends", {
      body: {
        sendId,
        parts,
        bytes,
        ownerNote,
        accessProof: toBase64(accessProof),
        ...(opts.expiresIn !== undefined && { expiresIn: opts.expiresIn }),
        ...(opts.maxViews !== undefined && { maxViews: opts.maxViews }),
        ...(passwordProof && { passwordProof: toBase64(passwordProof) }),
      },
    });
    const put = async (index: number, plain: Bytes) => {
      const sealed = await sealSendPart(contentKey, sendId, index, index === parts - 1, plain);
      await retrying(() => this.core.http.request("PUT", `/sends/${sendId}/parts/${index}`, { body: { data: toBase64(sealed) } }));
      opts.onProgress?.(index + 1, parts);
    };
    await put(0, plainHeader);
    if ("file" in content) {
      const data = content.file.data;
      for (let i = 0; i < parts - 1; i++)
        await put(i + 1, data.subarray(i * SEND_PART_BYTES, i * SEND_PART_BYTES + chunkPlainBytes(data.length, i)));
    }
    await retrying(() => this.core.http.request("POST", `/sends/${sendId}/finish`, { body: {} }));
    return { sendId, link: sendLinkOf(opts.linkBase ?? this.linkBase, sendId, secret), expiresAt: made.expiresAt };
  }

  /** This account's sends, newest first, each note opened here. */
  async list(opts: { linkBase?: string } = {}): Promise<SendSummary[]> {
    const keys = this.core.requireKeys();
    const { sends } = await this.core.http.request<{ sends: ServerSend[] }>("GET", "/sends");
    return Promise.all(
      sends.map(async (s) => {
        const note = await openOwnerNote(keys, s.sendId, s.ownerNote);
        const link = note && sendLinkOf(opts.linkBase ?? this.linkBase, s.sendId, fromBase64Url(note.secret));
        return {
          sendId: s.sendId,
          title: note?.title ?? null,
          kind: note?.kind ?? null,
          link: link && parseSendLink(link) ? link : null,
          views: s.views,
          maxViews: s.maxViews,
          hasPassword: s.hasPassword,
          createdAt: s.createdAt,
          expiresAt: s.expiresAt,
          complete: s.complete,
          partsGone: s.partsGone,
        };
      }),
    );
  }

  /** Deletes a send and its parts at once: its link opens nothing more. */
  async remove(sendId: string): Promise<void> {
    await this.core.http.request("DELETE", `/sends/${encodeURIComponent(sendId.toLowerCase())}`);
  }
}

function headerOf(content: SendContent, opts: SendOptions, email: string): SendHeader {
  const from = opts.showEmail ? { from: email } : {};
  if ("text" in content) return { v: 1, kind: "text", title: opts.title ?? DEFAULT_TEXT_TITLE, ...from, text: content.text };
  const f = content.file;
  return {
    v: 1,
    kind: "file",
    title: opts.title ?? f.name,
    ...from,
    file: { name: f.name, type: f.type ?? "application/octet-stream", size: f.data.length },
  };
}
