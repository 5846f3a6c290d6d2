// Completes package-lock.json with the platform-specific optional packages that npm left out.
// npm 11 drops an optional dependency from the lockfile when the registry it talks to serves no
// complete manifest for it (this machine's registry has no darwin or windows opencode builds);
// `npm ci` then refuses the lockfile as out of sync. Each missing entry is added with the version
// its parent asks for and the os/cpu (and libc) it is for, read from the registry where it has
// them and from the package name where it does not. npm never downloads these on other platforms.
//
//   npm install && node scripts/complete-lockfile.mjs
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const packages = lock.packages;

function platformFromName(name) {
  const os = /darwin/.test(name)
    ? "darwin"
    : /win32|windows/.test(name)
      ? "win32"
      : /android/.test(name)
        ? "android"
        : /freebsd/.test(name)
          ? "freebsd"
          : /openbsd/.test(name)
            ? "openbsd"
            : /openharmony/.test(name)
              ? "openharmony"
              : "linux";
  const cpu = /arm64/.test(name)
    ? "arm64"
    : /arm-|-arm$|arm-eabi|gnueabihf|musleabihf/.test(name)
      ? "arm"
      : /ia32/.test(name)
        ? "ia32"
        : /loong64/.test(name)
          ? "loong64"
          : /ppc64/.test(name)
            ? "ppc64"
            : /riscv64/.test(name)
              ? "riscv64"
              : /s390x/.test(name)
                ? "s390x"
                : "x64";
  const libc = os === "linux" ? (/musl/.test(name) ? "musl" : /gnu/.test(name) ? "glibc" : undefined) : undefined;
  return { os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}) };
}

function fromRegistry(name, version) {
  try {
    const out = execFileSync("npm", ["view", `${name}@${version}`, "dist.integrity", "os", "cpu", "libc", "--json"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const v = JSON.parse(out);
    return { integrity: v["dist.integrity"], os: v.os, cpu: v.cpu, ...(v.libc ? { libc: v.libc } : {}) };
  } catch {
    return null;
  }
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (packages[key] || packages[`${path}/node_modules/${dep}`]) continue;
    const version = range.replace(/^[\^~=]/, "");
    const known = fromRegistry(dep, version);
    const platform = known?.os
      ? { os: known.os, cpu: known.cpu, ...(known.libc ? { libc: known.libc } : {}) }
      : platformFromName(dep);
    packages[key] = {
      version,
      ...(known?.integrity ? { integrity: known.integrity } : {}),
      ...platform,
      ...(entry.dev ? { dev: true } : {}),
      license: entry.license ?? undefined,
      optional: true,
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stderr.write(`complete-lockfile: added ${added} optional platform entries\n`);
