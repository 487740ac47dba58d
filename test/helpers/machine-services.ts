/**
 * Stops and starts the machine's own PostgreSQL, Redis and NATS for the fault tests, with the
 * start commands of the machine notes. Each `stop` is paired with a `start` in a `finally`.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import { sleep } from "./wait";

function run(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: "ignore", timeout: 60_000 });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

async function waitPort(port: number, open: boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await portOpen(port)) !== open) {
    if (Date.now() > deadline) throw new Error(`port ${port} did not become ${open ? "open" : "closed"}`);
    await sleep(100);
  }
}

const pgVersion = () => fs.readdirSync("/etc/postgresql")[0]!;

export const nats = {
  async stop() {
    run("start-stop-daemon", ["--stop", "--oknodo", "--retry", "10", "--exec", "/usr/sbin/nats-server"]);
    await waitPort(4222, false);
  },
  async start() {
    run("start-stop-daemon", [
      "--start",
      "--oknodo",
      "--background",
      "--exec",
      "/usr/sbin/nats-server",
      "--",
      "-a",
      "127.0.0.1",
      "-p",
      "4222",
      "-js",
      "-sd",
      "/var/lib/nats-server",
      "-l",
      "/var/log/nats-server.log",
    ]);
    await waitPort(4222, true);
  },
};

export const redis = {
  async stop() {
    run("redis-cli", ["-p", "6379", "shutdown", "nosave"]);
    await waitPort(6379, false);
  },
  async start() {
    run("redis-server", [
      "--daemonize",
      "yes",
      "--bind",
      "127.0.0.1",
      "-::1",
      "--port",
      "6379",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      "/var/lib/redis",
      "--logfile",
      "/var/log/redis/ci.log",
    ]);
    await waitPort(6379, true);
  },
};

export const postgres = {
  async stop() {
    run("pg_ctlcluster", ["--skip-systemctl-redirect", pgVersion(), "main", "stop", "-m", "fast"]);
    await waitPort(5432, false);
  },
  async start() {
    run("pg_ctlcluster", ["--skip-systemctl-redirect", pgVersion(), "main", "start"]);
    await waitPort(5432, true);
  },
};
