// A command line split into words as a shell splits them (quotes kept whole, no expansion): what a
// user writes for --mcp NAME=COMMAND and --acp 'gemini --acp', run without a shell.
export function splitCommand(text: string): string[] {
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(text); m; m = re.exec(text))
    words.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3]!));
  return words;
}
