// The throughput baseline: the least a Node line reader can do — split lines, JSON.parse and
// JSON.stringify each one, write it out.
const NL = 0x0a;
let rest = null;
process.stdin.on("data", (chunk) => {
  let buf = rest ? Buffer.concat([rest, chunk]) : chunk;
  let start = 0;
  for (let nl = buf.indexOf(NL, start); nl !== -1; nl = buf.indexOf(NL, start)) {
    const line = buf.toString("utf8", start, nl);
    start = nl + 1;
    if (line) process.stdout.write(`${JSON.stringify(JSON.parse(line))}\n`);
  }
  rest = start < buf.length ? buf.subarray(start) : null;
});
