// Kept apart from schema.ts so the run path can name the version without loading zod.
export const SCHEMA_VERSION = "1";
