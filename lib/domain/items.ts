/** Item limits (contract section 4): sizes are of the decoded ciphertext. */
import { invalid } from "../errors";
import { base64Bytes } from "./encoding";

export const MAX_ENCRYPTED_DATA_BYTES = 256 * 1024;
export const MAX_ENCRYPTED_NAME_BYTES = 4 * 1024;

export function assertItemSizes(item: { encryptedData: string; encryptedName: string }): void {
  if (base64Bytes(item.encryptedData) > MAX_ENCRYPTED_DATA_BYTES) throw invalid("encryptedData is larger than 256 KiB", "encryptedData");
  if (base64Bytes(item.encryptedName) > MAX_ENCRYPTED_NAME_BYTES) throw invalid("encryptedName is larger than 4 KiB", "encryptedName");
}
