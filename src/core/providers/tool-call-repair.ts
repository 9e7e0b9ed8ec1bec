// The repair of what models write instead of proper tool calls (AgentConfig.repairToolCalls),
// for the OpenAI chat dialect local servers speak, and portable: a page installs it by passing
// it, and only then does its bundle hold it and jsonrepair.
//
// Per reply: calls written as text become real calls (text-tool-calls.ts; streamed text that may
// be one is held back until the reply decides it), a tool name that differs from an offered one
// only by case or `-`/`_` is mapped, and arguments are repaired and conformed to the tool's
// schema (tool-arguments.ts). Before a call runs, arguments that still do not fit make it fail
// with a message naming the argument. Every repair is said: a `repair` event and a `[repair]`
// line in the debug log.

import type { AgentEvent } from '../events.js';
import type { ToolCall } from '../types.js';
import type { ReplyRepair, ToolCallRepair } from './repair-seam.js';
import type { ParsedReply, ToolSchema } from './adapter.js';
import { TextCallScanner } from './text-tool-calls.js';
import { argumentsMisfit, repairArguments } from './tool-arguments.js';

const canonical = (name: string) => name.toLowerCase().replace(/-/g, '_');

class Repair implements ReplyRepair {
  readonly #tools: readonly ToolSchema[];
  readonly #showText: (text: string) => void;
  readonly #emit: (e: AgentEvent) => void;
  readonly #log: ((line: string) => void) | undefined;
  readonly #scanner = new TextCallScanner();
  #text = '';
  /** #text from #shown on: what is not out yet. */
  #unshown = '';
  #shown = 0;
  #streamed = false;

  constructor(tools: readonly ToolSchema[], show: (text: string) => void, emit: (e: AgentEvent) => void, log?: (line: string) => void) {
    this.#tools = tools;
    this.#showText = show;
    this.#emit = emit;
    this.#log = log;
  }

  /** Passed on its own as the request's text handler. */
  readonly text = (text: string): void => {
    this.#streamed = true;
    this.#text += text;
    this.#unshown += text;
    this.#show(this.#tools.length ? this.#scanner.push(text) : this.#text.length);
  };

  end(reply: ParsedReply): ParsedReply {
    const repairs: string[] = [];
    let r = reply;
    if (this.#tools.length) {
      if (!this.#streamed && r.content) this.#scanner.push(r.content);
      const text = this.#streamed ? this.#text : (r.content ?? '');
      const asText = r.toolCalls.length ? null : this.#textCalls(r, text, repairs);
      if (asText) r = asText;
      else {
        this.#show(text.length);
        r = { ...r, toolCalls: r.toolCalls.map((c) => this.#native(c, repairs)) };
      }
    } else this.#show(this.#text.length);
    for (const text of repairs) this.#emit({ type: 'repair', text });
    return r;
  }

  /** `r` with the calls its `text` ends with as real calls, when they all name offered tools; else null. */
  #textCalls(r: ParsedReply, text: string, repairs: string[]): ParsedReply | null {
    const found = this.#scanner.end();
    const named = found?.calls.map((c) => ({ tool: this.#tool(c.name), args: c.args }));
    if (!found || !named?.every((c) => c.tool)) return null;
    const content = text.slice(0, found.start).trimEnd();
    this.#log?.(`[repair] ${found.format}: ${text.slice(found.start)}`);
    repairs.push(`repaired ${named.length === 1 ? 'a tool call' : `${named.length} tool calls`} written as text`);
    this.#show(content.length);
    return {
      ...r,
      content: content || null,
      finishReason: 'tool_calls',
      toolCalls: named.map((c, i) => this.#call({ id: `call_text_${i + 1}`, name: c.tool!.name, args: '' }, c.tool!, c.args, null)),
    };
  }

  /**
   * Emit the streamed text up to `upTo` that is not out yet. Cut from what is not out, never from
   * #text: a slice of the whole text copies it whole (V8 flattens the concatenation) and keeps that
   * copy alive as long as the piece lives — per chunk, a reply's square in time and memory.
   */
  #show(upTo: number): void {
    if (!this.#streamed || upTo <= this.#shown) return;
    const n = upTo - this.#shown;
    const all = n >= this.#unshown.length;
    this.#showText(all ? this.#unshown : this.#unshown.slice(0, n));
    this.#unshown = all ? '' : this.#unshown.slice(n);
    this.#shown = upTo;
  }

  /** The offered tool `name` means: its own, else the one it spells with other case or `-`/`_` (when only one does). */
  #tool(name: string): ToolSchema | undefined {
    const exact = this.#tools.find((t) => t.name === name);
    if (exact) return exact;
    const like = this.#tools.filter((t) => canonical(t.name) === canonical(name));
    return like.length === 1 ? like[0] : undefined;
  }

  /** A call from `tool_calls`: its name mapped and its arguments repaired when they need it. */
  #native(c: ToolCall, repairs: string[]): ToolCall {
    const tool = this.#tool(c.name);
    if (!tool) return c;
    if (tool.name !== c.name) {
      repairs.push(`mapped the tool name '${c.name}' to '${tool.name}'`);
      this.#log?.(`[repair] tool name '${c.name}' taken as '${tool.name}'`);
    }
    return this.#call(c, tool, c.args, repairs);
  }

  /** `c` with `tool`'s name and `args` repaired; a repair of a call from `tool_calls` is counted in `repairs`. */
  #call(c: ToolCall, tool: ToolSchema, args: unknown, repairs: string[] | null): ToolCall {
    const a = repairArguments(args, tool.parameters);
    // Nothing makes them JSON: they go on as they came, and the call fails with the reason.
    const out: ToolCall = { ...c, name: tool.name, args: a ? a.json : typeof args === 'string' ? args : JSON.stringify(args) };
    if (a?.changed && repairs) {
      repairs.push(`repaired the arguments of a call to ${tool.name}`);
      this.#log?.(`[repair] arguments of ${tool.name}: ${typeof args === 'string' ? args : JSON.stringify(args)} -> ${a.json}`);
    }
    return out;
  }
}

/** Repairs tool calls as local models write them; give it to an agent as AgentConfig.repairToolCalls. */
export const repairToolCalls: ToolCallRepair = {
  reply: (tools, show, emit, log) => new Repair(tools ?? [], show, emit, log),
  check: argumentsMisfit,
};
