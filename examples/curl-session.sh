#!/usr/bin/env bash
# A session with curl, with openssl doing the client's crypto. Run it against a fresh server (npm start).
set -e
API=${API:-http://127.0.0.1:3000/api/v1}
cd "$(mktemp -d)"
# Client-side keys (a real client derives authHash and wraps its private keys from the master password).
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem 2>/dev/null
openssl pkey -in rsa.pem -pubout -outform DER -out rsa_pub.der
openssl genpkey -algorithm ed25519 -out ed.pem
openssl pkey -in ed.pem -pubout -outform DER | tail -c 32 > ed_pub.raw
openssl pkeyutl -sign -rawin -inkey ed.pem -in rsa_pub.der -out pub.sig
b64() { base64 -w0 "$1"; }
AUTH_HASH=$(head -c 32 /dev/urandom | base64 -w0)
SALT=$(head -c 16 /dev/urandom | base64 -w0)
BLOB=$(head -c 64 /dev/urandom | base64 -w0)   # stands for the encrypted private keys

# Register the first user (no invite needed for the very first one) and log in.
curl -s $API/auth/register -H 'content-type: application/json' -d '{
  "email": "ada@example.com", "authHash": "'$AUTH_HASH'",
  "kdf": {"algorithm": "pbkdf2-sha256", "salt": "'$SALT'", "iterations": 600000},
  "publicKey": "'$(b64 rsa_pub.der)'", "signingPublicKey": "'$(b64 ed_pub.raw)'",
  "publicKeySignature": "'$(b64 pub.sig)'",
  "encryptedPrivateKey": "'$BLOB'", "encryptedSigningPrivateKey": "'$BLOB'", "orgName": "Acme"}'; echo
TOKEN=$(curl -s $API/auth/login -H 'content-type: application/json' \
  -d '{"email": "ada@example.com", "authHash": "'$AUTH_HASH'"}' | sed 's/.*"accessToken":"\([^"]*\)".*/\1/')

# A shared vault: a random 256-bit key, wrapped with RSA-OAEP-SHA256 for yourself and signed.
head -c 32 /dev/urandom > vault.key
openssl pkeyutl -encrypt -pubin -keyform DER -inkey rsa_pub.der -in vault.key -out vault.wrap \
  -pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_mgf1_md:sha256
openssl pkeyutl -sign -rawin -inkey ed.pem -in vault.wrap -out vault.sig
curl -s $API/vaults -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d '{"name": "Team", "type": "shared", "encryptedVaultKey": "'$(b64 vault.wrap)'", "wrapSignature": "'$(b64 vault.sig)'"}'; echo
curl -s $API/vaults -H "authorization: Bearer $TOKEN"; echo

# Invite a colleague; the raw token is shown once.
curl -s $API/invites -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d '{"email": "grace@example.com", "role": "member", "expiresIn": "24h"}'; echo
