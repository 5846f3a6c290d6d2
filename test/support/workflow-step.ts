// The `run: |` script of a workflow step between `# oc-exec: NAME` and `# oc-exec: end`, dedented:
// what the docs' GitHub Actions workflows run, taken from the YAML as written.
export function workflowStep(workflow: string, name: string): string {
  const block = new RegExp(`# oc-exec: ${name}\\n\\s*run: \\|\\n([\\s\\S]*?)\\n\\s*# oc-exec: end`).exec(workflow);
  if (!block) throw new Error(`the workflow has no step ${name}`);
  const lines = block[1]!.split("\n");
  const indent = /^\s*/.exec(lines[0]!)![0].length;
  return lines.map((l) => l.slice(indent)).join("\n");
}
