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

  const parts: Buffer[] = []; // lines shown
  let used = 0; // their bytes
  let shown = 0;
  let capped = false; // a window line did not fit the budget
  // The first window line when even it alone exceeds the budget: its head and full length.
  let cutHead: Buffer | undefined;
  let cutLen = 0;
  let line = 1; // number of the line the next byte belongs to
  let lineParts: Buffer[] = [];
  let lineLen = 0;
  let partial = false; // bytes seen on `line` without its newline yet

  const endLine = () => {
    if (line >= offset && line <= last && !capped) {
      if (used + lineLen <= budget) {
        parts.push(...lineParts);
        used += lineLen;
        shown++;
      } else {
        capped = true;
        if (shown === 0) {
          const head = Buffer.concat(lineParts);
          cutHead = head.subarray(0, utf8Boundary(head, Math.min(budget, head.length)));
          cutLen = lineLen;
        }
      }
    }
    lineParts = [];
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
      while (pos < bytesRead) {
        const nl = buf.indexOf(10, pos);
        const end = nl === -1 || nl >= bytesRead ? bytesRead : nl + 1;
        const wanted = line >= offset && line <= last && !capped;
        if (wanted) {
          // A view of the chunk, which is then not reused; stop collecting once the line cannot
          // fit anyway, only count it.
          if (lineLen <= budget) {
            lineParts.push(buf.subarray(pos, Math.min(end, pos + budget + 1 - lineLen)));
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
  inv.complete(Buffer.concat([...parts, Buffer.from(`\n[lines ${offset}-${b} of ${total}${note}]`)]));
}
