/** `npm run settings`: writes the README's settings table and `.env.template` from lib/config.ts. */
import fs from "node:fs";
import path from "node:path";
import { envTemplate, readmeWithSettings } from "../lib/config-docs";

const root = path.resolve(__dirname, "..", "..");
const readme = path.join(root, "README.md");
fs.writeFileSync(readme, readmeWithSettings(fs.readFileSync(readme, "utf8")));
fs.writeFileSync(path.join(root, ".env.template"), envTemplate());
console.log("README.md (settings table) and .env.template written from lib/config.ts");
