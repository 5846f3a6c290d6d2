// The live line never spins on a terminal without a usable width (issue: a pty reporting 0 columns
// made ora erase lines forever, synchronously, starving the timers and the signal handlers).
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { canDrawLiveLine, createSpinner } from "../../src/domain/progress/spinner.js";

/** A terminal-like stream of the given width that counts what is written to it. */
function terminal(columns: number) {
  let bytes = 0;
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  // What ora asks of a terminal besides writing: moving and clearing the cursor's line.
  Object.assign(stream, { isTTY: true, columns, cursorTo: () => true, moveCursor: () => true, clearLine: () => true });
  return { stream, written: () => bytes };
}

describe("the live line and the terminal's width", () => {
  it("no live line where the terminal reports no usable width", () => {
    expect(canDrawLiveLine({ isTTY: true, columns: 0 }, {})).toBe(false);
    expect(canDrawLiveLine({ isTTY: true }, {})).toBe(false);
    expect(canDrawLiveLine({ isTTY: true, columns: 19 }, {})).toBe(false);
    expect(canDrawLiveLine({ isTTY: true, columns: 80 }, {})).toBe(true);
  });

  it("a terminal resized to 0 columns while the line is drawn: each redraw stays small and returns", async () => {
    const tty = terminal(80);
    const spinner = (await createSpinner(tty.stream, "a turn is running · step 2 · bash")).start();
    Object.assign(tty.stream, { columns: 0 });
    for (let i = 0; i < 50; i++) {
      spinner.text = `a turn is running · step ${i}`;
      spinner.render();
    }
    spinner.stop();
    expect(tty.written()).toBeLessThan(20_000);
  });
});
