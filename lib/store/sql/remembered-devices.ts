/**
 * Remembered devices on SQL (the port: ../port/sessions.ts; MongoDB: ../mongo/remembered-devices.ts).
 * `forgetDevicesIn` forgets every device of an account inside another aggregate's transaction (a
 * password change, a factor removed, a removal from the organization).
 */
import { rememberedOverCap, type RememberedDevice } from "../../domain/accounts/remembered-devices";
import type { UserId } from "../../domain/ids";
import type { ArgsOf, SessionStore } from "../port";
import type { Db, SqlContext } from "./context";
import type { RememberedDevicesTable } from "./schema";
import { writeOutbox } from "./outbox";

function toDevice(r: RememberedDevicesTable): RememberedDevice {
  return {
    deviceId: r.device_id,
    userId: r.user_id,
    deviceName: r.device_name,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    expiresAt: r.expires_at,
  };
}

export async function forgetDevicesIn(trx: Db, userId: UserId): Promise<void> {
  await trx.deleteFrom("remembered_devices").where("user_id", "=", userId).execute();
}

/** The remembered devices' part of the sessions aggregate (SqlSessions extends it). */
export class SqlRememberedDevices {
  constructor(protected readonly c: SqlContext) {}

  async rememberDevice({ device: d, tokenHash, max, events }: ArgsOf<SessionStore["rememberDevice"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      await trx.deleteFrom("remembered_devices").where("user_id", "=", d.userId).where("expires_at", "<=", d.createdAt).execute();
      await trx
        .insertInto("remembered_devices")
        .values({
          device_id: d.deviceId,
          token_hash: tokenHash,
          user_id: d.userId,
          device_name: d.deviceName,
          created_at: d.createdAt,
          last_used_at: d.lastUsedAt,
          expires_at: d.expiresAt,
        })
        .execute();
      const kept = await trx
        .selectFrom("remembered_devices")
        .select("device_id")
        .where("user_id", "=", d.userId)
        .orderBy("last_used_at", "desc")
        .orderBy("device_id")
        .execute();
      const over = rememberedOverCap(
        kept.map((r) => r.device_id),
        max,
      );
      if (over.length > 0) await trx.deleteFrom("remembered_devices").where("device_id", "in", over).execute();
    });
  }

  async findRememberedDevice(tokenHash: string): Promise<RememberedDevice | null> {
    const row = await this.c.db.selectFrom("remembered_devices").selectAll().where("token_hash", "=", tokenHash).executeTakeFirst();
    return row ? toDevice(row) : null;
  }

  async getRememberedDevice(deviceId: string): Promise<RememberedDevice | null> {
    const row = await this.c.db.selectFrom("remembered_devices").selectAll().where("device_id", "=", deviceId).executeTakeFirst();
    return row ? toDevice(row) : null;
  }

  async useRememberedDevice({ deviceId, at }: ArgsOf<SessionStore["useRememberedDevice"]>): Promise<void> {
    await this.c.db.updateTable("remembered_devices").set({ last_used_at: at }).where("device_id", "=", deviceId).execute();
  }

  async listRememberedDevices({ userId, now }: ArgsOf<SessionStore["listRememberedDevices"]>): Promise<RememberedDevice[]> {
    const rows = await this.c.db
      .selectFrom("remembered_devices")
      .selectAll()
      .where("user_id", "=", userId)
      .where("expires_at", ">", now)
      .orderBy("last_used_at", "desc")
      .orderBy("device_id")
      .execute();
    return rows.map(toDevice);
  }

  async forgetRememberedDevice({ userId, deviceId, events }: ArgsOf<SessionStore["forgetRememberedDevice"]>): Promise<boolean> {
    return this.c.tx(async (trx) => {
      const gone = await trx
        .deleteFrom("remembered_devices")
        .where("device_id", "=", deviceId)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      if (Number(gone.numDeletedRows) !== 1) return false;
      await writeOutbox(trx, events);
      return true;
    });
  }
}
