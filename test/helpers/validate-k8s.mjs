// Validates Kubernetes manifests against the API's schemas (kubernetes-models, generated from the
// Kubernetes OpenAPI document). ESM, run as its own process: the package ships ES modules only.
// Usage: node validate-k8s.mjs FILE...   Prints [{ file, kind, name, error }] as JSON.
import fs from "node:fs";
import { parseAllDocuments } from "yaml";

const out = [];
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(fs.readFileSync(file, "utf8"))) {
    if (doc.errors.length) {
      out.push({ file, kind: "?", name: "?", error: doc.errors.map((e) => e.message).join("; ") });
      continue;
    }
    const manifest = doc.toJS();
    if (!manifest) continue;
    const { apiVersion, kind } = manifest;
    const name = manifest.metadata?.name ?? "?";
    const group = apiVersion.includes("/") ? apiVersion : `v1`;
    try {
      const models = await import(`kubernetes-models/${group}`);
      const Model = models[kind];
      if (!Model) throw new Error(`no schema for ${apiVersion} ${kind}`);
      new Model(manifest).validate();
      out.push({ file, kind, name, error: null });
    } catch (err) {
      out.push({ file, kind, name, error: err.message });
    }
  }
}
console.log(JSON.stringify(out));
