// read_file: a window of lines from a text file, with a footer telling the model where it is.
// The file is scanned in chunks (never read whole), so huge files cost memory only for the window.
// Hitting the output cap is said in the footer, never silent.

import { type FileGuard, SandboxRefusal } from '../sandbox/file-guard.js';
import { openRegularFile } from '../host/regular-file.js';
import type { ToolDef, ToolInvocation } from '../core/types.js';
import { argInt, argString, expandHome, parseToolArgs } from './args.js';
import { errnoText } from '../host/errno-text.js';
import { utf8Boundary } from './output-cap.js';

export const READ_DEFAULT_LIMIT = 200;
const CHUNK = 64 * 1024;
/** Bytes of the cap kept free for the footer (its longest form is ~110 bytes). */
const FOOTER_RESERVE = 128;

export const readFileTool: ToolDef = {
  name: 'read_file',
  description: 'read a window of lines from a text file',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'path to the file' },
      offset: { type: 'integer', description: 'starting line, 1-indexed (default 1)' },
      limit: { type: 'integer', description: 'max lines to return (default 200)' },
    },
    required: ['path'],
  },
  noPrompt: true, // read-only: safe to run unprompted
  readOnly: true,
  invoke: (inv) => invokeReadFile(inv, null),
};

/** read_file under the sandbox's file policy. */
export function guardedReadFile(guard: FileGuard): ToolDef {
  return { ...readFileTool, invoke: (inv) => invokeReadFile(inv, guard) };
}

async function invokeReadFile(inv: ToolInvocation, guard: FileGuard | null): Promise<void> {
  const args = parseToolArgs(inv.args);
  if (!args) return inv.fail('invalid arguments');
  const rawPath = argString(args, 'path');
  if (rawPath === undefined) return inv.fail("missing required string argument 'path'");
  const path = expandHome(rawPath);
  let offset = argInt(args, 'offset', 1);
  let limit = argInt(args, 'limit', READ_DEFAULT_LIMIT);
  if (offset < 1) offset = 1;
  if (limit < 1) limit = READ_DEFAULT_LIMIT;
  const budget = Math.max(0, inv.outputCap - FOOTER_RESERVE);
  const last = offset + limit - 1; // last line of the window

  let fh: Awaited<ReturnType<typeof openRegularFile>>;
  try {
    guard?.beforeRead(path);
    fh = await openRegularFile(path, { opened: guard ? (fd) => guard.afterOpenRead(fd) : undefined });
  } catch (e) {
    if (e instanceof SandboxRefusal) return inv.fail(e.message);
    return inv.fail(`cannot open '${path}': ${errnoText(e)}`);
  }

  const parts = new Pieces(); // lines shown
  let used = 0; // their bytes
  let shown = 0;
  let capped = false; // a window line did not fit the budget
  // The first window line when even it alone exceeds the budget: its head and full length.
  let cutHead: Buffer | undefined;
  let cutLen = 0;
  let line = 1; // number of the line the next byte belongs to
  const lineParts = new Pieces();
  let lineLen = 0;
  let partial = false; // bytes seen on `line` without its newline yet

  // The run of whole lines shown from the current chunk, not yet in `parts`: a line adds to it
  // without a call (a call per line had V8 optimize the callee within a few reads).
  let runBuf: Buffer | undefined;
  let runStart = 0;
  let runEnd = 0;
  const flushRun = () => {
    if (runBuf) parts.add(runBuf, runStart, runEnd);
    runBuf = undefined;
  };

  const endLine = () => {
    if (line >= offset && line <= last && !capped) {
      if (used + lineLen <= budget) {
        flushRun();
        parts.addAll(lineParts);
        used += lineLen;
        shown++;
      } else {
        capped = true;
        if (shown === 0) {
          const head = lineParts.join('');
          cutHead = head.subarray(0, utf8Boundary(head, Math.min(budget, head.length)));
          cutLen = lineLen;
        }
      }
    }
    lineParts.clear();
    lineLen = 0;
  };

  try {
    // Devices and pipes may never end (/dev/zero): the whole file is scanned to count its lines.
    const st = await fh.stat();
    if (st.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    if (!st.isFile()) throw new Error('not a regular file');
    let buf = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      if (inv.signal.aborted) return inv.fail('cancelled');
      const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) break;
      let kept = false;
      let pos = 0;
      // Newlines are looked for in the chunk as one-byte text (a byte per character): String's
      // indexOf is V8's own, where Buffer's validates its arguments through a Node function that
      // every line's call would make hot enough for V8 to optimize in a run of a few reads.
      const text = buf.toString('latin1', 0, bytesRead);
      while (pos < bytesRead) {
        const nl = text.indexOf('\n', pos);
        const end = nl === -1 ? bytesRead : nl + 1;
        const wanted = line >= offset && line <= last && !capped;
        if (wanted && lineLen === 0 && end === nl + 1 && used + (end - pos) <= budget) {
          // A whole line of this chunk that fits.
          if (runBuf === buf && runEnd === pos) runEnd = end;
          else {
            flushRun();
            runBuf = buf;
            runStart = pos;
            runEnd = end;
          }
          kept = true;
          used += end - pos;
          shown++;
          line++;
          partial = false;
          pos = end;
          continue;
        }
        if (wanted) {
          // A piece of the chunk, which is then not reused; stop collecting once the line cannot
          // fit anyway, only count it.
          if (lineLen <= budget) {
            lineParts.add(buf, pos, Math.min(end, pos + budget + 1 - lineLen));
            kept = true;
          }
          lineLen += end - pos;
        }
        partial = true;
        if (end === nl + 1) {
          endLine();
          line++;
          partial = false;
        }
        pos = end;
      }
      if (kept) buf = Buffer.allocUnsafe(CHUNK);
    }
  } catch (e) {
    return inv.fail(`cannot read '${path}': ${errnoText(e)}`);
  } finally {
    await fh.close().catch(() => {});
  }
  if (partial) {
    endLine(); // a last line without newline still counts
    line++;
  }
  flushRun();
  const total = line - 1;

  if (cutHead) {
    const more = offset < total ? '; raise offset to continue' : '';
    const footer = `\n[line ${offset} of ${total} is ${cutLen} bytes; output truncated after the first ${cutHead.length}${more}]`;
    return inv.complete(Buffer.concat([cutHead, Buffer.from(footer)]));
  }
  if (shown === 0) return inv.complete(`(file has ${total} lines; offset ${offset} is past end)`);
  const b = offset + shown - 1;
  const note = capped
    ? `; output truncated at the ${inv.outputCap}-byte cap; raise offset to continue`
    : b < total
      ? '; raise offset to continue'
      : '';
  // Bytes, not text: the core's binary detection sees the file as it is.
  inv.complete(parts.join(`\n[lines ${offset}-${b} of ${total}${note}]`));
}

/**
 * Pieces of the chunks read, as ranges copied once at the end; a line's range extends the one
 * before it in the same chunk. (A Buffer view per line made V8 optimize Buffer's constructor, and
 * start its optimizing compiler, ~4 MiB, in a run of a few reads.)
 */
class Pieces {
  #bufs: Buffer[] = [];
  #starts: number[] = [];
  #ends: number[] = [];
  #bytes = 0;

  add(buf: Buffer, start: number, end: number): void {
    const i = this.#bufs.length - 1;
    if (i >= 0 && this.#bufs[i] === buf && this.#ends[i] === start) this.#ends[i] = end;
    else {
      this.#bufs.push(buf);
      this.#starts.push(start);
      this.#ends.push(end);
    }
    this.#bytes += end - start;
  }

  addAll(other: Pieces): void {
    for (let i = 0; i < other.#bufs.length; i++) this.add(other.#bufs[i]!, other.#starts[i]!, other.#ends[i]!);
  }

  clear(): void {
    // Setting an array's length is a call into the runtime, even for an empty array: most lines
    // never had a piece here (they went straight to `parts`, or were only counted).
    if (this.#bufs.length === 0) return;
    this.#bufs.length = this.#starts.length = this.#ends.length = this.#bytes = 0;
  }

  /** The pieces in order, then `tail`, as one buffer. */
  join(tail: string): Buffer {
    const out = Buffer.allocUnsafe(this.#bytes + Buffer.byteLength(tail));
    let at = 0;
    for (let i = 0; i < this.#bufs.length; i++) at += this.#bufs[i]!.copy(out, at, this.#starts[i], this.#ends[i]);
    out.write(tail, at);
    return out;
  }
}
