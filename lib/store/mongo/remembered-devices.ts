/**
 * Remembered devices on MongoDB (the port: ../port/sessions.ts; SQL: ../sql/remembered-devices.ts).
 * `forgetDevicesIn` forgets every device of an account inside another aggregate's transaction (a
 * password change, a factor removed, a removal from the organization).
 */
import type { ClientSession } from "mongodb";
import { rememberedOverCap, type RememberedDevice } from "../../domain/accounts/remembered-devices";
import type { UserId } from "../../domain/ids";
import type { ArgsOf, SessionStore } from "../port";
import type { MongoContext } from "./context";
import type { RememberedDeviceDoc } from "./documents";
import { writeOutbox } from "./outbox";

function toDevice(d: RememberedDeviceDoc): RememberedDevice {
  return {
    deviceId: d._id,
    userId: d.userId,
    deviceName: d.deviceName,
    createdAt: d.createdAt,
    lastUsedAt: d.lastUsedAt,
    expiresAt: d.expiresAt,
  };
}

export async function forgetDevicesIn(c: MongoContext, session: ClientSession, userId: UserId): Promise<void> {
  await c.rememberedDevices.deleteMany({ userId }, { session });
}

/** The remembered devices' part of the sessions aggregate (MongoSessions extends it). */
export class MongoRememberedDevices {
  constructor(protected readonly c: MongoContext) {}

  async rememberDevice({ device: d, tokenHash, max, events }: ArgsOf<SessionStore["rememberDevice"]>): Promise<void> {
    await this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      await this.c.rememberedDevices.deleteMany({ userId: d.userId, expiresAt: { $lte: d.createdAt } }, { session });
      await this.c.rememberedDevices.insertOne(
        {
          _id: d.deviceId,
          tokenHash,
          userId: d.userId,
          deviceName: d.deviceName,
          createdAt: d.createdAt,
          lastUsedAt: d.lastUsedAt,
          expiresAt: d.expiresAt,
        },
        { session },
      );
      const kept = await this.c.rememberedDevices
        .find({ userId: d.userId }, { session, projection: { _id: 1 } })
        .sort({ lastUsedAt: -1, _id: 1 })
        .toArray();
      const over = rememberedOverCap(
        kept.map((k) => k._id),
        max,
      );
      if (over.length > 0) await this.c.rememberedDevices.deleteMany({ _id: { $in: over } }, { session });
    });
  }

  async findRememberedDevice(tokenHash: string): Promise<RememberedDevice | null> {
    const doc = await this.c.rememberedDevices.findOne({ tokenHash });
    return doc ? toDevice(doc) : null;
  }

  async getRememberedDevice(deviceId: string): Promise<RememberedDevice | null> {
    const doc = await this.c.rememberedDevices.findOne({ _id: deviceId });
    return doc ? toDevice(doc) : null;
  }

  async useRememberedDevice({ deviceId, at }: ArgsOf<SessionStore["useRememberedDevice"]>): Promise<void> {
    await this.c.rememberedDevices.updateOne({ _id: deviceId }, { $set: { lastUsedAt: at } });
  }

  async listRememberedDevices({ userId, now }: ArgsOf<SessionStore["listRememberedDevices"]>): Promise<RememberedDevice[]> {
    const docs = await this.c.rememberedDevices
      .find({ userId, expiresAt: { $gt: now } })
      .sort({ lastUsedAt: -1, _id: 1 })
      .toArray();
    return docs.map(toDevice);
  }

  async forgetRememberedDevice({ userId, deviceId, events }: ArgsOf<SessionStore["forgetRememberedDevice"]>): Promise<boolean> {
    return this.c.tx(async (session) => {
      const gone = await this.c.rememberedDevices.deleteOne({ _id: deviceId, userId }, { session });
      if (gone.deletedCount !== 1) return false;
      await writeOutbox(this.c, session, events);
      return true;
    });
  }
}
