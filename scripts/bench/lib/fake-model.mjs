// What the agent benchmarks share: the fake model (scripts/fake-model.ts) in its own process,
// and the median/ms helpers they report with.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./daemon-client.mjs";

/** Start the fake model with `args` (e.g. ["--script", file, "--loop"]); resolves with its base URL and the process. */
export async function startFakeModel(args) {
  const fake = spawn(process.execPath, ["--import", "tsx", join(ROOT, "scripts/fake-model.ts"), ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  const { baseUrl } = await new Promise((resolve, reject) => {
    let buf = "";
    fake.stdout.on("data", (d) => {
      buf += d;
      if (buf.includes("\n")) resolve(JSON.parse(buf.split("\n")[0]));
    });
    fake.once("exit", (c) => reject(new Error(`fake model exited ${c}`)));
  });
  return { baseUrl, fake };
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : Number.NaN;
};

export const ms = (x) => `${x.toFixed(2)} ms`;
