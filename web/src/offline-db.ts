/**
 * The web vault's IndexedDB database, `vault-offline`: one store per kind of record, each keyed by
 * the account's id and each record sealed by its writer. `snapshots` holds the offline copy
 * (offline.ts), `edits` the edits made offline that wait to be saved (offline-edits.ts).
 */

const DB_NAME = "vault-offline";
export const STORES = { snapshots: "snapshots", edits: "edits" } as const;
type Store = (typeof STORES)[keyof typeof STORES];

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error("IndexedDB request failed"));
  });
}

/** The database, with every store made if it lacks one (also in a database an earlier release made with fewer). */
async function openDb(version?: number): Promise<IDBDatabase> {
  const req = indexedDB.open(DB_NAME, version);
  req.onupgradeneeded = () => {
    for (const store of Object.values(STORES))
      if (!req.result.objectStoreNames.contains(store)) req.result.createObjectStore(store, { keyPath: "userId" });
  };
  const db = await request(req);
  if (Object.values(STORES).every((s) => db.objectStoreNames.contains(s))) return db;
  db.close();
  return openDb(db.version + 1);
}

/** One request on `store`, in a transaction of its own: answered once that transaction is done (a write then outlives a reload). */
export async function inStore<T>(store: Store, mode: IDBTransactionMode, run: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await openDb();
  try {
    const tx = db.transaction(store, mode);
    const done = new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onabort = () => reject(tx.error ?? new Error("IndexedDB transaction aborted"));
    });
    const [result] = await Promise.all([request(run(tx.objectStore(store))), done]);
    return result;
  } finally {
    db.close();
  }
}
