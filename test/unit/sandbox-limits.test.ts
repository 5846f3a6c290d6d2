// Where the sandbox's pids cgroup goes, and which hard-linked files it keeps read-only.
import { describe, expect, it } from "vitest";
import { readOnlyForLinks } from "../../src/hosts/sandbox/hard-links.js";
import { pidsCgroupDirs } from "../../src/hosts/sandbox/process-limit.js";

const v1 = [
  "40 35 0:35 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "41 35 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
].join("\n");
const v2 = "30 25 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate";

describe("the pids cgroup a sandbox's limit is made in", () => {
  it("cgroup v1: the pids hierarchy's mount and this process's path in it", () => {
    expect(pidsCgroupDirs(v1, "8:pids:/job/42\n4:memory:/other\n0::/")).toEqual(["/sys/fs/cgroup/pids/job/42"]);
  });
  it("cgroup v2: the unified mount and this process's path", () => {
    expect(pidsCgroupDirs(v2, "0::/user.slice/user-1001.slice/session-3.scope\n")).toEqual([
      "/sys/fs/cgroup/user.slice/user-1001.slice/session-3.scope",
    ]);
  });
  it("no controller mounted: none", () => {
    expect(pidsCgroupDirs("40 35 0:35 / /proc rw - proc proc rw", "0::/")).toEqual([]);
  });
  it("a hybrid system: the unified mount first, then v1's pids hierarchy; both are tried", () => {
    const unified = "29 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw";
    expect(pidsCgroupDirs(`${unified}\n${v1}`, "8:pids:/\n0::/")).toEqual([
      "/sys/fs/cgroup/unified",
      "/sys/fs/cgroup/pids",
    ]);
  });
});

describe("hard-linked files kept read-only", () => {
  it("each file while few; their top directories when too many to bind one by one", () => {
    expect(readOnlyForLinks(["/w/a.js", "/w/lib/b.js"], "/w")).toEqual(["/w/a.js", "/w/lib/b.js"]);
    const many = Array.from({ length: 300 }, (_, i) => `/w/node_modules/.pnpm/p${i}/index.js`);
    expect(readOnlyForLinks([...many, "/w/vendor/x.js"], "/w")).toEqual(["/w/node_modules", "/w/vendor"]);
  });
});
