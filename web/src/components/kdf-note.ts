/** What the page says while the master password's key is derived (logging in, registering, unlocking): it takes a moment. */
export const KDF_NOTE = "Deriving your key from your password (Argon2id, 64 MiB, in the background): this takes a moment…";
