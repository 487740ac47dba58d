/**
 * A streamed body's pace (lib/http/request-body.ts, `readJsonStream`): one arriving slower than the
 * pace allows is cut (408) while another request waits for a slot, and only then; one whose slot
 * is given up to a waiter ends the same way.
 */
import { PassThrough } from "node:stream";
import { readJsonStream, type BodyPace } from "../../../../lib/http/request-body";
import { sleep } from "../../../helpers/wait";

const bounds = { maxBytes: 1 << 20, maxValues: 8, maxDepth: 2, maxStringChars: 1 << 20 };
const pace = (starved: () => boolean): BodyPace => ({ minBytesPerSec: 1_000, graceMs: 200, starved });

/** Sends `{"data":"<n a's>"}` as `pieces` writes, `everyMs` apart. */
async function send(stream: PassThrough, n: number, pieces: number, everyMs: number): Promise<void> {
  const text = `{"data":"${"a".repeat(n)}"}`;
  const size = Math.ceil(text.length / pieces);
  for (let at = 0; at < text.length; at += size) {
    stream.write(text.slice(at, at + size));
    await sleep(everyMs);
  }
  stream.end();
}

/** A body read under `bodyPace`: the stream to send on, and the read's outcome. */
function paced(bodyPace: BodyPace): { stream: PassThrough; read: Promise<unknown> } {
  const stream = new PassThrough();
  return { stream, read: readJsonStream(stream, bounds, 10_000, bodyPace) };
}

test("a body slower than its pace is cut while another request waits for a slot", async () => {
  const { stream, read } = paced(pace(() => true));
  const sending = send(stream, 200, 10, 150); // about 140 bytes a second
  await expect(read).rejects.toMatchObject({ type: "BODY_TIMEOUT", message: expect.stringContaining("slower than 1 KiB/s") });
  await sending;
});

test("the same slow body is read whole while nobody waits", async () => {
  const { stream, read } = paced(pace(() => false));
  await send(stream, 200, 10, 150);
  await expect(read).resolves.toEqual({ data: "a".repeat(200) });
});

test("a body at its pace is read whole though others wait", async () => {
  const { stream, read } = paced(pace(() => true));
  await send(stream, 2_400, 12, 100); // about 2,400 bytes a second
  await expect(read).resolves.toEqual({ data: "a".repeat(2_400) });
});

test("the first moments are not held to the pace: a slow start is forgiven for `graceMs`", async () => {
  const { stream, read } = paced({ ...pace(() => true), graceMs: 1_000 });
  await sleep(700);
  await send(stream, 3_000, 3, 10);
  await expect(read).resolves.toEqual({ data: "a".repeat(3_000) });
});

test("while a body arrives its slot is offered to waiters; given up, the read ends with 408; once whole, the offer is withdrawn", async () => {
  let giveWay: (() => void) | undefined;
  const offering: BodyPace = {
    ...pace(() => false),
    inTransfer: (end) => {
      giveWay = end;
      return () => (giveWay = undefined);
    },
  };
  const cut = paced(offering);
  expect(giveWay).toBeDefined();
  cut.stream.write('{"data":"aaa');
  giveWay!();
  await expect(cut.read).rejects.toMatchObject({ type: "BODY_TIMEOUT", message: expect.stringContaining("another organization") });
  expect(giveWay).toBeUndefined();

  const whole = paced(offering);
  await send(whole.stream, 10, 1, 0);
  await expect(whole.read).resolves.toEqual({ data: "a".repeat(10) });
  expect(giveWay).toBeUndefined();
});
