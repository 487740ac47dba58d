/**
 * The sweeper: every SWEEP_INTERVAL (and shortly after start), purges invites never used,
 * INVITE_RETENTION after their expiry, expired or revoked refresh tokens, expired remembered devices, and items TRASH_RETENTION in a trash (lib/workers/sweeper.ts); one node at a time across the deployment.
 */
import type { ServiceSchema } from "moleculer";
import type { Runtime } from "../lib/runtime";
import { sweepOnce, type SweepOutcome } from "../lib/workers/sweeper";
import { runnerService } from "../app/node-runtime";

const FIRST_SWEEP_MS = 5_000;
/** A sweeper that dies mid-sweep keeps the others out at most this long. */
const LEASE_MS = 5 * 60_000;

type Log = { info(message: string): void; warn(message: string): void };

export function sweeperService(rt: Runtime): ServiceSchema {
  let loop: SweepLoop | undefined;
  return {
    name: "sweeper",
    actions: {
      /** For operators (REPL: `call sweeper.sweep`): one sweep now. */
      sweep: { handler: (): Promise<SweepOutcome> => sweep(rt) },
    },
    async started() {
      loop = new SweepLoop(rt, this.logger);
      loop.start();
    },
    async stopped() {
      await loop?.stop();
    },
  };
}

const policyOf = ({ config }: Runtime) => ({
  leaseMs: LEASE_MS,
  inviteRetentionMs: config.inviteRetentionMs,
  trashRetentionMs: config.trashRetentionMs,
  uploadWindowMs: config.attachmentUploadWindowMs,
});

function sweep(rt: Runtime): Promise<SweepOutcome> {
  return sweepOnce(rt.store, rt.locks, policyOf(rt), new Date(rt.clock.nowMs()));
}

/** A sweep every SWEEP_INTERVAL, the next one timed from the end of the last; one at a time in this process. */
class SweepLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly rt: Runtime,
    private readonly log: Log,
  ) {}

  start(): void {
    this.schedule(Math.min(FIRST_SWEEP_MS, this.rt.config.sweepIntervalMs));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => this.tick(), ms);
    this.timer.unref();
  }

  private tick(): void {
    if (this.running) return;
    const { log } = this;
    const interval = this.rt.config.sweepIntervalMs;
    this.running = sweep(this.rt)
      .then(
        (outcome) => {
          if (outcome.ran && outcome.invites + outcome.refreshTokens + outcome.sessions > 0) {
            log.info(
              `swept ${outcome.invites} expired invites, ${outcome.refreshTokens} expired or revoked refresh tokens and ${outcome.sessions} ended sessions`,
            );
          }
        },
        (err: Error) => log.warn(`sweep failed (${err.name}); next one in ${interval} ms`),
      )
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        this.schedule(interval);
      });
  }
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(sweeperService);
