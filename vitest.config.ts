import { defineConfig } from "vitest/config";

// Each real opencode turn takes ~2 s of CPU and ~600 MB; two workers match the two cores here.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
