/**
 * Opening a send by its link, with no account (design: docs/design/sends.md). Everything shown is
 * what opens under the key the link's secret (and the password) gives: the title, the sender's
 * words, the text, the file's name and bytes. The server chooses nothing of it: a header or part
 * from another send, moved, changed, cut short or run on is refused as `SEND_TAMPERED`.
 */
import { fromBase64, toBase64, type Bytes } from "../../protocol/encoding";
import { SecurityError } from "../../protocol/errors";
import {
  SEND_PART_BYTES,
  SEND_PART_OVERHEAD,
  deriveSendKeys,
  openSendPart,
  parseSendHeader,
  parseSendLink,
  sendPartCount,
  type SendHeader,
} from "../../protocol/formats/sends";
import { chunkPlainBytes } from "../../protocol/formats/attachments";
import { ApiError } from "../errors";
import { Transport } from "../http";
import { retrying } from "../client/retrying";

/** How long a part is asked for again while the server is busy: within the ten minutes an open's access lasts. */
const SEND_ACCESS_RETRY_MS = 5 * 60_000;

export interface OpenSendOptions {
  /** The password the sender gave apart from the link, when the send has one. */
  password?: string;
  /** The API's address; by default the link's web vault's `/api/v1`. */
  apiUrl?: string;
  fetch?: typeof fetch;
  /** Hears each part of a file as it is read (done, of all). */
  onProgress?: (done: number, parts: number) => void;
}

/** A send as its link opens it. */
export interface OpenedSend {
  sendId: string;
  title: string;
  /** Who the sender says they are, in the sealed header (the link vouches for it, not the server). */
  from?: string;
  kind: SendHeader["kind"];
  text?: string;
  file?: { name: string; type: string; size: number; data: Bytes };
  /** What the server says is left: when it expires, and how many more opens it has (null: no cap). */
  expiresAt: string;
  viewsLeft: number | null;
}

interface OpenAnswer {
  parts: number;
  bytes: number;
  expiresAt: string;
  viewsLeft: number | null;
  header: string;
  access: string;
}

const tampered = (what: string) => new SecurityError("SEND_TAMPERED", `This send does not open with its link's key: ${what}`);

/** True when the error is the server asking for the send's password (none was given). */
export const needsSendPassword = (err: unknown): boolean => err instanceof ApiError && err.status === 401 && err.field === "passwordProof";

/** The API address a link's web vault serves. */
export const apiUrlOfLink = (base: string): string => `${base.replace(/\/+$/, "")}/api/v1`;

/** Opens a send by its link: one view taken. A wrong or missing password is the server's `401`; a link that is not one, an `Error`. */
export async function openSend(link: string, opts: OpenSendOptions = {}): Promise<OpenedSend> {
  const parsed = parseSendLink(link);
  if (!parsed) throw new Error("This is not a send's link: it ends #/send/<id>/<secret>");
  const { sendId, secret } = parsed;
  const http = new Transport({ baseUrl: opts.apiUrl ?? apiUrlOfLink(parsed.base), ...(opts.fetch && { fetch: opts.fetch }) });
  const keys = await deriveSendKeys(secret, sendId, opts.password);
  const answer = await http.request<OpenAnswer>("POST", `/sends/${sendId}/open`, {
    auth: false,
    body: { accessProof: toBase64(keys.accessProof), ...(keys.passwordProof && { passwordProof: toBase64(keys.passwordProof) }) },
  });
  const parts = answer.parts;
  const header = await openHeader(keys.contentKey, sendId, answer.header, parts);
  const base = { sendId, title: header.title, ...(header.from !== undefined && { from: header.from }), kind: header.kind };
  const left = { expiresAt: answer.expiresAt, viewsLeft: answer.viewsLeft };
  if (header.kind === "text") return { ...base, text: header.text!, ...left };
  // The sealed size the server keeps must be what the header's file size gives, before a byte is set aside for it.
  const sealed = Math.floor((answer.header.length * 3) / 4) - (answer.header.match(/=+$/)?.[0].length ?? 0);
  if (answer.bytes !== sealed + header.file!.size + (parts - 1) * SEND_PART_OVERHEAD)
    throw tampered(`the server keeps ${answer.bytes} sealed bytes, not what a file of ${header.file!.size} bytes seals to`);
  const data = await readFile(http, keys.contentKey, sendId, answer.access, header.file!.size, opts.onProgress);
  return { ...base, file: { ...header.file!, data }, ...left };
}

/** Part 0, opened: its place and final flag follow from the part count the server claims, which the header must then agree with. */
async function openHeader(key: Bytes, sendId: string, sealed: string, parts: number): Promise<SendHeader> {
  let plain: Bytes;
  try {
    plain = await openSendPart(key, sendId, 0, parts === 1, fromBase64(sealed));
  } catch {
    throw tampered("its header does not open (another send's, changed, or a wrong count of parts)");
  }
  const header = parseSendHeader(plain);
  if (!header) throw tampered("its header is not one");
  if (sendPartCount(header) !== parts) throw tampered(`its header says ${sendPartCount(header)} parts, the server ${parts}`);
  return header;
}

/** A file's parts 1.., each opened at its place, the last as the last, each of the size the header's file size gives. */
async function readFile(
  http: Transport,
  key: Bytes,
  sendId: string,
  access: string,
  size: number,
  onProgress?: (done: number, parts: number) => void,
): Promise<Bytes> {
  const chunks = Math.max(1, Math.ceil(size / SEND_PART_BYTES));
  const out = new Uint8Array(size);
  for (let i = 0; i < chunks; i++) {
    // Sent again while the server is away or busy (its slots are shared), for as long as the access lasts.
    const answer = await retrying(
      () =>
        http.request<{ index: number; data: string }>("POST", `/sends/${sendId}/parts/${i + 1}/read`, { auth: false, body: { access } }),
      SEND_ACCESS_RETRY_MS,
    );
    let plain: Bytes;
    try {
      plain = await openSendPart(key, sendId, i + 1, i === chunks - 1, fromBase64(answer.data));
    } catch {
      throw tampered(`part ${i + 1} does not open (another send's, moved, changed, or not the last)`);
    }
    if (plain.length !== chunkPlainBytes(size, i))
      throw tampered(`part ${i + 1} is ${plain.length} bytes, not ${chunkPlainBytes(size, i)}`);
    out.set(plain, i * SEND_PART_BYTES);
    onProgress?.(i + 2, chunks + 1);
  }
  return out;
}
