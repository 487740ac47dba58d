/** Sends: a text or a file shared by link, sealed on the client (lib/domain/sends/decisions.ts). */
import { createHash, timingSafeEqual } from "node:crypto";
import type { ServiceSchema } from "moleculer";
import type { SendId } from "../lib/domain/ids";
import {
  SEND_ACCESS_MS,
  planSendOpenCheck,
  planSendPartRead,
  planSendPartTarget,
  planSendRequest,
  sendLifetimeOf,
  type SendLimits,
} from "../lib/domain/sends/decisions";
import { addressLimit } from "../lib/domain/accounts/address-limits";
import { limitPerAddress } from "../lib/limits/counters";
import { sendPolicyOf } from "../lib/domain/orgs/policies";
import type { OrgId } from "../lib/domain/ids";
import { checkSendPassword, hashSendProof } from "../lib/auth/send-passwords";
import { chunkTransfers } from "../lib/http/chunk-body";
import { callerOf, created, noContent, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import type { SendRecord } from "../lib/store/port";
import { MAX_SEND_PART_SEALED } from "../protocol/formats/sends";
import { runnerService } from "../app/node-runtime";

type SendParams = { sendId: SendId };
type CreateParams = SendParams & {
  parts: number;
  bytes: number;
  expiresIn?: string;
  maxViews?: number;
  accessProof: string;
  passwordProof?: string;
  ownerNote: string;
};
type OpenParams = SendParams & { accessProof: string; passwordProof?: string };
type ReadParams = SendParams & { index: number; access: string };
type Transfers = ReturnType<typeof chunkTransfers<"sendId">>;

/** What the store keeps of a link's access proof: its SHA-256 (the proof has 256 bits of the link's secret behind it: no slow hash is needed). */
const accessHashOf = (proof: string): string => createHash("sha256").update(Buffer.from(proof, "base64")).digest("hex");

const accessProofMatches = (proof: string, hash: string): boolean => {
  const given = Buffer.from(accessHashOf(proof), "hex");
  const kept = Buffer.from(hash, "hex");
  return given.length === kept.length && timingSafeEqual(given, kept);
};

/** What an open's access to a send's parts holds, sealed for this server alone. */
const ACCESS_PURPOSE = "send-parts";

export function sendsService(rt: Runtime): ServiceSchema {
  const transfers = chunkTransfers(rt.config, {
    action: "sends.putPart",
    ids: ["sendId"],
    maxSealed: MAX_SEND_PART_SEALED,
    what: "send parts",
  });
  return {
    name: "sends",
    actions: {
      create: { params: paramsOf("sends.create"), handler: (ctx: Ctx<CreateParams>) => create(rt, ctx) },
      list: { handler: (ctx: Ctx) => list(rt, ctx) },
      // The stream's own parameters; its body is checked against the route's.
      putPart: { params: { sendId: { type: "string" } }, handler: (ctx: Ctx<Record<string, unknown>>) => putPart(rt, transfers, ctx) },
      finish: { params: paramsOf("sends.finish"), handler: (ctx: Ctx<SendParams>) => finish(rt, ctx) },
      remove: { params: paramsOf("sends.remove"), handler: (ctx: Ctx<SendParams>) => remove(rt, ctx) },
      open: { params: paramsOf("sends.open"), handler: (ctx: Ctx<OpenParams>) => open(rt, transfers, ctx) },
      readPart: { params: paramsOf("sends.readPart"), handler: (ctx: Ctx<ReadParams>) => readPart(rt, transfers, ctx) },
    },
  };
}

const limitsOf = ({ config }: Runtime): SendLimits => ({
  maxBytes: config.sendMaxBytes,
  perUser: config.sendsPerUser,
  orgQuotaBytes: config.sendOrgQuotaBytes,
  maxLifetimeMs: config.sendMaxLifetimeMs,
});

/** A send as its sender reads it: what the record holds but whose and which organization's, which the sender knows. */
const view = <T extends SendRecord>({ ownerId: _owner, orgId: _org, ...rest }: T) => rest;

/** The organization's send policy; sends forbidden everywhere where the server turns them off (SENDS). */
const policyOf = async (rt: Runtime, orgId: OrgId) => {
  const policy = sendPolicyOf(await rt.store.security.getPolicies(orgId));
  return rt.config.sendsEnabled ? policy : { ...policy, forbidden: true };
};

async function create(rt: Runtime, ctx: Ctx<CreateParams>) {
  const caller = callerOf(ctx);
  const p = ctx.params;
  const lifetimeMs = sendLifetimeOf(p.expiresIn, limitsOf(rt));
  const policy = await policyOf(rt, caller.orgId);
  // What needs nothing read or hashed is refused before the password's slow hash is made.
  planSendRequest({ parts: p.parts, bytes: p.bytes, lifetimeMs }, limitsOf(rt), policy);
  const status = await rt.store.sends.createSend({
    actorId: caller.userId,
    orgId: caller.orgId,
    sendId: p.sendId,
    parts: p.parts,
    bytes: p.bytes,
    maxViews: p.maxViews ?? null,
    accessHash: accessHashOf(p.accessProof),
    passwordHash: p.passwordProof === undefined ? null : await hashSendProof(rt, p.passwordProof),
    ownerNote: p.ownerNote,
    lifetimeMs,
    limits: limitsOf(rt),
    policy,
    now: rt.clock.timestamp(),
  });
  created(ctx, `/sends/${p.sendId}`);
  return view(status);
}

async function list({ store, clock }: Runtime, ctx: Ctx) {
  return { sends: (await store.sends.listSends({ actorId: callerOf(ctx).userId, now: clock.timestamp() })).map(view) };
}

async function putPart({ store, clock }: Runtime, transfers: Transfers, ctx: Ctx<Record<string, unknown>>) {
  const actorId = callerOf(ctx).userId;
  await transfers.put(
    ctx,
    async ({ sendId, index }) =>
      void planSendPartTarget((await store.sends.sendGate({ sendId: sendId as SendId }))?.state, actorId, clock.nowMs(), index),
    ({ sendId, index, data }) => store.sends.putPart({ actorId, sendId: sendId as SendId, index, data, now: clock.timestamp() }),
  );
  return noContent(ctx);
}

async function finish(rt: Runtime, ctx: Ctx<SendParams>) {
  const caller = callerOf(ctx);
  const events = [rt.events.record("send.created", { actorId: caller.userId, orgId: caller.orgId })];
  const record = await rt.store.sends.finishSend({ actorId: caller.userId, sendId: ctx.params.sendId, now: rt.clock.timestamp(), events });
  rt.events.kick();
  return view(record);
}

async function remove(rt: Runtime, ctx: Ctx<SendParams>) {
  const caller = callerOf(ctx);
  const events = [rt.events.record("send.deleted", { actorId: caller.userId, orgId: caller.orgId })];
  await rt.store.sends.deleteSend({ actorId: caller.userId, sendId: ctx.params.sendId, events });
  rt.events.kick();
  return noContent(ctx);
}

/** Whose slot a public request of a send takes: the send's, shared by the addresses that read it. */
const slotOf = (ctx: Ctx, sendId: string) => ({ group: `send:${sendId}`, member: ctx.meta.clientIp ?? "unknown" });

/**
 * An open by the link: counted per address (SEND_OPEN_RATE_LIMIT), the send there for it, the
 * link's proof, and its password (counted, then compared) before the view is taken under the
 * send's lock, in a slot (the answer holds a header of up to a MiB). The audit record names the
 * send's owner: who opened it, the server cannot know.
 */
async function open(rt: Runtime, transfers: Transfers, ctx: Ctx<OpenParams>) {
  const { sendId, accessProof, passwordProof } = ctx.params;
  const { config, counters, metrics } = rt;
  await limitPerAddress(counters, ctx.meta.clientIp, addressLimit("send-open", config.sendOpenRateLimit), () =>
    metrics.rateLimited("send-open"),
  );
  const gate = await rt.store.sends.sendGate({ sendId });
  const policy = gate ? await policyOf(rt, gate.orgId) : { forbidden: false, maxLifetimeMs: null };
  planSendOpenCheck(gate?.state, rt.clock.nowMs(), policy, {
    linkProven: gate !== null && accessProofMatches(accessProof, gate.accessHash),
    passwordRequired: gate?.passwordHash != null,
    passwordGiven: passwordProof !== undefined,
  });
  if (gate?.passwordHash) await checkSendPassword(rt, sendId, ctx.meta.clientIp ?? "unknown", passwordProof!, gate.passwordHash);
  const opened = await transfers.read(
    ctx,
    () =>
      rt.store.sends.openSend({
        sendId,
        now: rt.clock.timestamp(),
        policy,
        events: (owner) => [rt.events.record("send.opened", { actorId: owner.ownerId, orgId: owner.orgId })],
      }),
    (answer) => answer.header.byteLength,
    slotOf(ctx, sendId),
  );
  rt.events.kick();
  return {
    sendId,
    parts: opened.parts,
    bytes: opened.bytes,
    expiresAt: opened.expiresAt,
    viewsLeft: opened.viewsLeft,
    header: Buffer.from(opened.header.buffer, opened.header.byteOffset, opened.header.byteLength).toString("base64"),
    access: rt.sealer.seal(ACCESS_PURPOSE, { sendId, accessHash: gate!.accessHash }, SEND_ACCESS_MS),
  };
}

/**
 * A part read by an open's access: an access that is not this send's is refused before a slot or a
 * read is spent on it; one sealed for the send as made before (its id reused) reads nothing.
 */
async function readPart(rt: Runtime, transfers: Transfers, ctx: Ctx<ReadParams>) {
  const { sendId, index, access } = ctx.params;
  const granted = rt.sealer.open<{ sendId: string; accessHash: string }>(ACCESS_PURPOSE, access);
  const nowMs = rt.clock.nowMs();
  if (granted?.sendId !== sendId) planSendPartRead(undefined, nowMs, index, false);
  const gate = await rt.store.sends.sendGate({ sendId });
  const policy = gate ? await policyOf(rt, gate.orgId) : { forbidden: false, maxLifetimeMs: null };
  return transfers.read(
    ctx,
    async () => {
      const data = await rt.store.sends.readPart({
        sendId,
        index,
        now: new Date(nowMs).toISOString(),
        accessOk: gate?.accessHash === granted!.accessHash,
        policy,
      });
      return { index, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64") };
    },
    (answer) => answer.data.length,
    slotOf(ctx, sendId),
  );
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(sendsService);
