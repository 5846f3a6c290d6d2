// The throughput baseline: the least a competent Node line reader does — split lines without
// re-copying a long line for every chunk, JSON.parse and JSON.stringify each one, write it out.
const NL = 0x0a;
let parts = [];
const flush = (buf) => {
  const line = buf.toString("utf8");
  if (line) process.stdout.write(`${JSON.stringify(JSON.parse(line))}\n`);
};
process.stdin.on("data", (chunk) => {
  let start = 0;
  for (let nl = chunk.indexOf(NL, start); nl !== -1; nl = chunk.indexOf(NL, start)) {
    const piece = chunk.subarray(start, nl);
    flush(parts.length ? Buffer.concat([...parts, piece]) : piece);
    parts = [];
    start = nl + 1;
  }
  if (start < chunk.length) parts.push(chunk.subarray(start));
});
