// Raw bindings to the Lua 5.4 wasm build inside wasmoon@1.16.0: its glue.wasm, instantiated
// here with the few imports it has (leanLuaModule), never wasmoon's JavaScript — neither its
// high-level engine (its timeout can abort the instance and its strings stop at NUL) nor its
// emscripten glue (150 KB to load in every worker, and a build with assertions on).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { compileWasm } from '../host/wasm-compile.js';

const require = createRequire(import.meta.url);

/** A `lua_State*`: an address in the instance's linear memory. */
export type LuaPtr = number;

/** The C exports we use. Lua integers cross as BigInt (WASM_BIGINT build). */
export interface LuaModule {
  readonly HEAPU8: Uint8Array;
  readonly HEAP32: Int32Array;
  readonly HEAPU32: Uint32Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  _realloc(ptr: number, size: number): number;
  addFunction(fn: (...args: never[]) => unknown, sig: string): number;

  _lua_newstate(alloc: number, ud: number): LuaPtr;
  _lua_close(L: LuaPtr): void;
  _lua_atpanic(L: LuaPtr, fn: number): number;
  _lua_newthread(L: LuaPtr): LuaPtr;
  _lua_gettop(L: LuaPtr): number;
  _lua_settop(L: LuaPtr, idx: number): void;
  _lua_pushvalue(L: LuaPtr, idx: number): void;
  _lua_rotate(L: LuaPtr, idx: number, n: number): void;
  _lua_checkstack(L: LuaPtr, n: number): number;
  _lua_xmove(from: LuaPtr, to: LuaPtr, n: number): void;
  _lua_type(L: LuaPtr, idx: number): number;
  _lua_isinteger(L: LuaPtr, idx: number): number;
  _lua_tonumberx(L: LuaPtr, idx: number, isnum: number): number;
  _lua_tointegerx(L: LuaPtr, idx: number, isnum: number): bigint;
  _lua_toboolean(L: LuaPtr, idx: number): number;
  _lua_tolstring(L: LuaPtr, idx: number, len: number): number;
  _lua_touserdata(L: LuaPtr, idx: number): number;
  _lua_rawlen(L: LuaPtr, idx: number): number;
  _lua_rawequal(L: LuaPtr, a: number, b: number): number;
  _lua_pushnil(L: LuaPtr): void;
  _lua_pushnumber(L: LuaPtr, n: number): void;
  _lua_pushinteger(L: LuaPtr, n: bigint): void;
  _lua_pushlstring(L: LuaPtr, s: number, len: number): number;
  _lua_pushcclosure(L: LuaPtr, fn: number, n: number): void;
  _lua_pushboolean(L: LuaPtr, b: number): void;
  _lua_pushlightuserdata(L: LuaPtr, p: number): void;
  _lua_getglobal(L: LuaPtr, name: number): number;
  _lua_getfield(L: LuaPtr, idx: number, k: number): number;
  _lua_rawget(L: LuaPtr, idx: number): number;
  _lua_rawgeti(L: LuaPtr, idx: number, n: bigint): number;
  _lua_createtable(L: LuaPtr, narr: number, nrec: number): void;
  _lua_newuserdatauv(L: LuaPtr, size: number, nuv: number): number;
  _lua_getmetatable(L: LuaPtr, idx: number): number;
  _lua_setglobal(L: LuaPtr, name: number): void;
  _lua_setfield(L: LuaPtr, idx: number, k: number): void;
  _lua_rawset(L: LuaPtr, idx: number): void;
  _lua_rawseti(L: LuaPtr, idx: number, n: bigint): void;
  _lua_setmetatable(L: LuaPtr, idx: number): number;
  _lua_callk(L: LuaPtr, nargs: number, nres: number, ctx: number, k: number): void;
  _lua_pcallk(L: LuaPtr, nargs: number, nres: number, errfunc: number, ctx: number, k: number): number;
  _lua_error(L: LuaPtr): number;
  _lua_next(L: LuaPtr, idx: number): number;
  _lua_yieldk(L: LuaPtr, nres: number, ctx: number, k: number): number;
  _lua_resume(L: LuaPtr, from: LuaPtr, nargs: number, nres: number): number;
  _lua_isyieldable(L: LuaPtr): number;
  _lua_sethook(L: LuaPtr, fn: number, mask: number, count: number): void;
  _lua_concat(L: LuaPtr, n: number): void;
  _luaL_where(L: LuaPtr, level: number): void;
  _luaL_ref(L: LuaPtr, t: number): number;
  _luaL_unref(L: LuaPtr, t: number, ref: number): void;
  _luaL_loadbufferx(L: LuaPtr, buf: number, size: number, name: number, mode: number): number;
  _luaopen_base(L: LuaPtr): number;
  _luaopen_string(L: LuaPtr): number;
  _luaopen_table(L: LuaPtr): number;
  _luaopen_math(L: LuaPtr): number;
  _luaopen_utf8(L: LuaPtr): number;
}

export const LUA_OK = 0;
export const LUA_YIELD = 1;
export const LUA_ERRRUN = 2;
export const LUA_ERRSYNTAX = 3;
export const LUA_ERRMEM = 4;

export const LUA_TNIL = 0;
export const LUA_TBOOLEAN = 1;
export const LUA_TLIGHTUSERDATA = 2;
export const LUA_TNUMBER = 3;
export const LUA_TSTRING = 4;
export const LUA_TTABLE = 5;
export const LUA_TFUNCTION = 6;
export const LUA_TUSERDATA = 7;
export const LUA_TTHREAD = 8;
export const TYPE_NAMES = ['nil', 'boolean', 'userdata', 'number', 'string', 'table', 'function', 'userdata', 'thread'];

export const LUA_REGISTRYINDEX = -1000000 - 1000;
export const LUA_MASKCOUNT = 8;
export const LUA_MULTRET = -1;
export const upvalueIndex = (i: number) => LUA_REGISTRYINDEX - i;

/** emscripten implements longjmp (lua_error, lua_yield) by throwing this value through JS frames. */
export const isLongjmp = (e: unknown) => e === Infinity;

// One compiled WebAssembly.Module serves every instance of a thread: wasmoon reads glue.wasm and
// calls WebAssembly.instantiate(bytes, imports) each time; we compile once and instantiate that.
let compiled: Promise<WebAssembly.Module> | undefined;
function compileOnce(bin: Uint8Array, tierUp = true): Promise<WebAssembly.Module> {
  compiled ??= compileWasm(() => WebAssembly.compile(smallerInitialMemory(bin) as BufferSource), { tierUp });
  return compiled;
}
/**
 * The build asks for 16 MiB of initial linear memory per instance, though a plugin's Lua heap
 * is capped at 8 MiB and the heap grows on demand. Each instance's 16 MiB buffer also counts as
 * external memory for V8's GC, which made creating plugins GC-bound. Rewrite the declared
 * initial size to what the static data and stack need plus 1 MiB (2 MiB here); on any layout
 * surprise, leave the binary untouched.
 */
function smallerInitialMemory(bin: Uint8Array): Uint8Array {
  try {
    let p = 8;
    const leb = () => {
      let r = 0;
      let s = 0;
      let b: number;
      do {
        b = bin[p++];
        r += (b & 0x7f) * 2 ** s;
        s += 7;
      } while (b & 0x80);
      return r;
    };
    let memInitAt = -1;
    let memInitLen = 0;
    let memInit = 0;
    let stackTop = -1;
    while (p < bin.length) {
      const id = bin[p++];
      const len = leb();
      const end = p + len;
      if (id === 5) {
        // memory: count, flags, initial[, maximum]
        if (leb() !== 1) return bin;
        p++;
        memInitAt = p;
        memInit = leb();
        memInitLen = p - memInitAt;
      } else if (id === 6) {
        // globals: emscripten's first is __stack_pointer = i32.const <top of stack>
        if (leb() < 1) return bin;
        if (bin[p] !== 0x7f || bin[p + 2] !== 0x41) return bin;
        p += 3;
        stackTop = leb();
      }
      p = end;
    }
    if (memInitAt < 0 || stackTop < 0 || memInitLen !== 2) return bin;
    const pages = Math.ceil((stackTop + 1024 * 1024) / 65536);
    if (pages >= memInit || pages > 0x3fff) return bin;
    const out = bin.slice();
    out[memInitAt] = 0x80 | (pages & 0x7f); // keep the 2-byte LEB128 width
    out[memInitAt + 1] = pages >> 7;
    return out;
  } catch {
    return bin;
  }
}

/** A wasm function of signature `sig` (emscripten's letters: v, i, j, f, d) calling fn. */
const wrappers = new Map<string, WebAssembly.Module>();
function wasmFunction(fn: (...args: never[]) => unknown, sig: string): unknown {
  let mod = wrappers.get(sig);
  if (!mod) {
    const code: Record<string, number> = { i: 0x7f, j: 0x7e, f: 0x7d, d: 0x7c };
    const params = [...sig.slice(1)].map((c) => code[c]);
    const type = [0x01, 0x60, params.length, ...params, ...(sig[0] === 'v' ? [0x00] : [0x01, code[sig[0]]])];
    // (module (type $t …) (import "e" "f" (func (type $t))) (export "f" (func 0)))
    const imports = [0x02, 0x07, 0x01, 0x01, 0x65, 0x01, 0x66, 0x00, 0x00];
    const exports = [0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00];
    mod = new WebAssembly.Module(new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 0x01, type.length, ...type, ...imports, ...exports]));
    wrappers.set(sig, mod);
  }
  return new WebAssembly.Instance(mod, { e: { f: fn } }).exports.f;
}

interface LeanExports {
  memory: WebAssembly.Memory;
  __indirect_function_table: WebAssembly.Table;
  __wasm_call_ctors(): void;
  emscripten_stack_init(): void;
  stackSave(): number;
  stackRestore(sp: number): void;
  setThrew(threw: number, value: number): void;
}

/**
 * A Lua instance without wasmoon's JavaScript (150 KB of emscripten glue and engine): the
 * compiled module instantiated with the few imports the Lua build has. Lua's error handling
 * (setjmp/longjmp as a thrown Infinity caught in invoke_vii) and heap growth work as in the glue;
 * what only the os and io libraries reach (files, clocks, the environment) fails, and states made
 * here never open those libraries.
 *
 * `tierUp: false` keeps the functions in V8's baseline code when this is the thread's first
 * instance: after work of a few milliseconds, optimizing the functions it made hot (the Lua VM,
 * lexer and parser) takes V8 more CPU time, on other threads, than the work itself.
 */
export async function leanLuaModule(o: { tierUp?: boolean } = {}): Promise<LuaModule> {
  const glue = join(dirname(require.resolve('wasmoon')), 'glue.wasm');
  const module = await compileOnce(readFileSync(glue), o.tierUp);
  let ex!: LeanExports;
  const m = {} as Record<string, unknown>;
  const views = () => {
    const b = ex.memory.buffer;
    Object.assign(m, { HEAPU8: new Uint8Array(b), HEAP32: new Int32Array(b), HEAPU32: new Uint32Array(b) });
  };
  const refuse = (what: string) => () => {
    throw new Error(`the Lua build called ${what}, which clm does not provide`);
  };
  const ENOSYS = 52;
  const env: WebAssembly.ModuleImports = {
    abort: refuse('abort'),
    exit: refuse('exit'),
    invoke_vii(index: number, a: number, b: number) {
      const sp = ex.stackSave();
      try {
        (ex.__indirect_function_table.get(index) as (a: number, b: number) => void)(a, b);
      } catch (e) {
        ex.stackRestore(sp);
        if (!isLongjmp(e)) throw e;
        ex.setThrew(1, 0);
      }
    },
    _emscripten_throw_longjmp() {
      throw Infinity;
    },
    emscripten_resize_heap(requested: number) {
      requested >>>= 0;
      const old = ex.memory.buffer.byteLength;
      // As the glue does: 20% more than asked, less on each failed attempt, within 2 GiB.
      for (let cut = 1; cut <= 4; cut *= 2) {
        const wanted = Math.max(requested, Math.min(old * (1 + 0.2 / cut), requested + 96 * 1024 * 1024));
        const size = Math.min(2 ** 31, Math.ceil(wanted / 65536) * 65536);
        try {
          ex.memory.grow((size - old) / 65536);
          views();
          return 1;
        } catch {
          // try a smaller step
        }
      }
      return 0;
    },
    emscripten_date_now: () => Date.now(),
    _emscripten_get_now_is_monotonic: () => 1,
    strftime: () => 0,
    system: () => -1,
    _mktime_js: () => -1,
    _localtime_js: () => {},
    _gmtime_js: () => {},
    _tzset_js: () => {},
  };
  for (const call of ['openat', 'fcntl64', 'ioctl', 'dup3', 'unlinkat', 'rmdir', 'renameat', 'readlinkat'])
    env[`__syscall_${call}`] = () => -ENOSYS;
  const wasi = {
    fd_write: () => ENOSYS,
    fd_read: () => ENOSYS,
    fd_close: () => ENOSYS,
    fd_seek: () => ENOSYS,
    environ_sizes_get: (count: number, size: number) => {
      (m.HEAPU32 as Uint32Array)[count >> 2] = 0;
      (m.HEAPU32 as Uint32Array)[size >> 2] = 0;
      return 0;
    },
    environ_get: () => 0,
  };
  const instance = new WebAssembly.Instance(module, { env, wasi_snapshot_preview1: wasi });
  ex = instance.exports as unknown as LeanExports;
  views();
  for (const [name, v] of Object.entries(ex)) if (typeof v === 'function') m[`_${name}`] = v;
  ex.emscripten_stack_init();
  ex.__wasm_call_ctors();
  const table = ex.__indirect_function_table;
  m.addFunction = (fn: (...args: never[]) => unknown, sig: string) => {
    const index = table.grow(1);
    table.set(index, wasmFunction(fn, sig));
    return index;
  };
  return m as unknown as LuaModule;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/** Byte-exact string traffic between JS and one instance, plus interned C strings. */
export class LuaMem {
  readonly m: LuaModule;
  /** Scratch words: [0] lua_resume nres, [4] tolstring length, [8] isnum. */
  readonly scratch: number;
  private buf = 0;
  private bufSize = 0;
  private readonly cstrings = new Map<string, number>();

  constructor(m: LuaModule) {
    this.m = m;
    this.scratch = m._malloc(16);
  }

  /** A NUL-terminated C string that lives as long as the instance (names, field keys). */
  cstr(s: string): number {
    let p = this.cstrings.get(s);
    if (p === undefined) {
      const b = encoder.encode(s);
      p = this.m._malloc(b.length + 1);
      this.m.HEAPU8.set(b, p);
      this.m.HEAPU8[p + b.length] = 0;
      this.cstrings.set(s, p);
    }
    return p;
  }

  /** A staging buffer of at least n bytes (reused; valid until the next call). */
  private staging(n: number): number {
    if (n > this.bufSize) {
      if (this.buf) this.m._free(this.buf);
      this.bufSize = Math.max(n, 256, this.bufSize * 2);
      this.buf = this.m._malloc(this.bufSize);
      if (!this.buf) {
        this.bufSize = 0;
        throw new Error('wasm heap exhausted');
      }
    }
    return this.buf;
  }

  /** Push a string or bytes as a Lua string (binary-safe). May raise a Lua memory error. */
  push(L: LuaPtr, s: string | Uint8Array): void {
    const m = this.m;
    if (typeof s !== 'string') {
      const p = this.staging(s.length);
      m.HEAPU8.set(s, p);
      m._lua_pushlstring(L, p, s.length);
      return;
    }
    const n = s.length;
    let ascii = n <= 64;
    if (ascii) {
      const p = this.staging(n);
      const heap = m.HEAPU8;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 127) {
          ascii = false;
          break;
        }
        heap[p + i] = c;
      }
      if (ascii) {
        m._lua_pushlstring(L, p, n);
        return;
      }
    }
    const p = this.staging(n * 3);
    const { written } = encoder.encodeInto(s, m.HEAPU8.subarray(p, p + n * 3));
    m._lua_pushlstring(L, p, written);
  }

  /** The raw bytes of the string (or number) at idx, as a view into the heap: copy before any Lua call. */
  view(L: LuaPtr, idx: number): Uint8Array | null {
    const m = this.m;
    const p = m._lua_tolstring(L, idx, this.scratch + 4);
    if (!p) return null;
    const len = m.HEAPU32[(this.scratch + 4) >> 2];
    return m.HEAPU8.subarray(p, p + len);
  }

  /** The string at idx decoded as UTF-8 (invalid sequences become U+FFFD), or null if not a string/number. */
  str(L: LuaPtr, idx: number): string | null {
    const v = this.view(L, idx);
    if (!v) return null;
    if (v.length <= 64) {
      let s = '';
      for (let i = 0; i < v.length; i++) {
        const c = v[i];
        if (c > 127) return decoder.decode(v);
        s += String.fromCharCode(c);
      }
      return s;
    }
    return decoder.decode(v);
  }

  /** A readable message for the error value at idx (never runs metamethods); nilText for a nil error. */
  errorText(L: LuaPtr, idx: number, nilText: string): string {
    const t = this.m._lua_type(L, idx);
    if (t === LUA_TSTRING || t === LUA_TNUMBER) return this.str(L, idx) ?? '';
    if (t === LUA_TNIL) return nilText;
    return `(error object is a ${TYPE_NAMES[t] ?? 'unknown'} value)`;
  }

  /** A copy of the bytes at idx. */
  bytes(L: LuaPtr, idx: number): Uint8Array | null {
    const v = this.view(L, idx);
    return v ? v.slice() : null;
  }

  /** Text if the bytes are valid UTF-8, else a copy of the bytes (the agent then reports binary output). */
  text(L: LuaPtr, idx: number): string | Uint8Array | null {
    const v = this.view(L, idx);
    if (!v) return null;
    try {
      return strictDecoder.decode(v);
    } catch {
      return v.slice();
    }
  }

  /** Load source bytes as a text chunk (never bytecode). Returns the lua_load status. */
  loadText(L: LuaPtr, source: Uint8Array, chunkName: string): number {
    const m = this.m;
    const p = m._malloc(source.length + 1);
    if (!p) throw new Error('wasm heap exhausted');
    try {
      m.HEAPU8.set(source, p);
      return m._luaL_loadbufferx(L, p, source.length, this.cstr(chunkName), this.cstr('t'));
    } finally {
      m._free(p);
    }
  }
}
