// `oc-exec [options] resume [ID | --last] [prompt...]` is a friendly spelling of --session ID and
// --continue. It is rewritten before commander parses, wherever the word stands among the options:
// the first operand is found with the program's own knowledge of which options take a value.
import type { Command } from "commander";

function firstOperand(argv: string[], program: Command): number {
  const takesValue = new Set<string>();
  for (const option of program.options) {
    if (!option.required && !option.optional) continue;
    if (option.short) takesValue.add(option.short);
    if (option.long) takesValue.add(option.long);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return i + 1 < argv.length ? i + 1 : -1;
    if (!arg.startsWith("-") || arg === "-") return i;
    if (!arg.includes("=") && takesValue.has(arg)) i++;
  }
  return -1;
}

export function rewriteResume(argv: string[], program: Command): string[] {
  const at = firstOperand(argv, program);
  if (at === -1 || argv[at] !== "resume") return argv;
  const before = argv.slice(0, at);
  const [first, ...rest] = argv.slice(at + 1);
  if (first === undefined || first === "--last") return [...before, "--continue", ...rest];
  if (/^ses_/.test(first)) return [...before, "--session", first, ...rest];
  return [...before, "--continue", first, ...rest];
}
