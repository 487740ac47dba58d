/**
 * The floor of `BENCH_PARTS=files` (bench/files.ts): a bare node:http server that takes a chunk as
 * the product's route does, `PUT .../chunks/:index` with `{ "data": "<base64>" }`, parses the JSON,
 * decodes the base64 and appends the bytes to one file (FLOOR_FILE), and answers
 * `GET .../chunks/:index` with `{ index, data }` read back from it. No checks, no database, no
 * crypto: what moving the bytes costs in Node. GET /api/v1/health answers, for the bench's start.
 */
import fs from "node:fs";
import http from "node:http";

const fd = fs.openSync(process.env.FLOOR_FILE!, "w+");
const where = new Map<number, { offset: number; length: number }>();
let end = 0;

function put(index: number, req: http.IncomingMessage, res: http.ServerResponse): void {
  const parts: Buffer[] = [];
  req.on("data", (d: Buffer) => parts.push(d));
  req.on("end", () => {
    const data = Buffer.from((JSON.parse(Buffer.concat(parts).toString("utf8")) as { data: string }).data, "base64");
    const offset = end;
    end += data.length;
    where.set(index, { offset, length: data.length });
    fs.write(fd, data, 0, data.length, offset, (err) => {
      res.statusCode = err ? 500 : 204;
      res.end();
    });
  });
}

function get(index: number, res: http.ServerResponse): void {
  const at = where.get(index);
  if (!at) {
    res.statusCode = 404;
    res.end();
    return;
  }
  const data = Buffer.alloc(at.length);
  fs.read(fd, data, 0, at.length, at.offset, (err) => {
    if (err) {
      res.statusCode = 500;
      res.end();
      return;
    }
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ index, data: data.toString("base64") }));
  });
}

http
  .createServer((req, res) => {
    const chunk = /\/chunks\/(\d+)$/.exec(req.url ?? "");
    if (req.method === "PUT" && chunk) put(Number(chunk[1]), req, res);
    else if (req.method === "GET" && chunk) get(Number(chunk[1]), res);
    else if (req.url === "/api/v1/health") res.end('{"status":"ok"}');
    else {
      res.statusCode = 404;
      res.end();
    }
  })
  .listen(Number(process.env.PORT), "127.0.0.1");
