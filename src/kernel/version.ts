// oc-exec's own version, read once from oc-exec's package.json.
import { ownPackage } from "./package-root.js";

export const VERSION = ownPackage()?.version ?? "0.0.0";
