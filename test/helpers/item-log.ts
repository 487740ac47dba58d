/** Item-log links as a test client signs them with a user's keys (the protocol: protocol/formats/item-log.ts). */
import { sign } from "node:crypto";
import { itemLinkBytes, itemLinkSigningBytes, type ItemLink, type UnsignedItemLink } from "../../protocol/formats/item-log";
import { sha256Hex, type Signer } from "./roster";

export function signItemLinkAs(user: Signer, link: UnsignedItemLink): ItemLink {
  return { ...link, sig: sign(null, itemLinkSigningBytes(link), user.keys.edPrivate).toString("base64") };
}

export const itemLinkHashOf = (link: UnsignedItemLink) => sha256Hex(itemLinkBytes(link));
