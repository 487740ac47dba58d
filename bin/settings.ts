/** `npm run settings`: writes the settings page's table and `.env.template` from lib/config/. */
import fs from "node:fs";
import path from "node:path";
import { SETTINGS_DOC, envTemplate, readmeWithSettings } from "../lib/config-docs";

const root = path.resolve(__dirname, "..", "..");
const doc = path.join(root, SETTINGS_DOC);
fs.writeFileSync(doc, readmeWithSettings(fs.readFileSync(doc, "utf8")));
fs.writeFileSync(path.join(root, ".env.template"), envTemplate());
console.log(`${SETTINGS_DOC} (settings table) and .env.template written from lib/config/`);
