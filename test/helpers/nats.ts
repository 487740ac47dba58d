/** The machine's NATS JetStream, as the tests reach it directly: raw publishes, stream state, cleanup. */
import { connect, StringCodec, type NatsConnection } from "nats";

export const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";

export async function withNats<T>(fn: (nc: NatsConnection) => Promise<T>, url = NATS_URL): Promise<T> {
  const nc = await connect({ servers: url });
  try {
    return await fn(nc);
  } finally {
    await nc.close();
  }
}

/** Publishes any text on a subject of the namespace's event stream, as a misbehaving publisher could. */
export async function publishRaw(namespace: string, type: string, payload: string): Promise<void> {
  await withNats(async (nc) => void (await nc.jetstream().publish(`${namespace}.events.${type}`, StringCodec().encode(payload))));
}

/** How many messages the namespace's event stream holds. */
export async function storedEvents(namespace: string): Promise<number> {
  return withNats(async (nc) => (await (await nc.jetstreamManager()).streams.info(`${namespace}-events`)).state.messages);
}

/** Removes a namespace's streams (and with them its consumers) from the machine's NATS (or the one at `url`). */
export async function deleteStreams(namespace: string, url = NATS_URL): Promise<void> {
  await withNats(async (nc) => {
    const jsm = await nc.jetstreamManager();
    for (const name of [`${namespace}-events`, `${namespace}-dead-letters`]) await jsm.streams.delete(name).catch(() => false);
  }, url);
}
