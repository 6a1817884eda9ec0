// Bundles the web dashboard (daemon/dashboard/web/) into dist/dashboard/ with esbuild: one
// app.js (Preact + htm, minified), app.css and index.html. Run by `npm run build`; no network.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "daemon", "dashboard", "web");
const out = join(root, "dist", "dashboard");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(src, "main.js")],
  outfile: join(out, "app.js"),
  bundle: true,
  format: "esm",
  minify: true,
  target: ["chrome110", "firefox110", "safari16"],
  legalComments: "none",
  logLevel: "warning",
});
for (const f of ["app.css", "index.html"]) copyFileSync(join(src, f), join(out, f));
