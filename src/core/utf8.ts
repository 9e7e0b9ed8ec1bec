// One UTF-8 decoder for whole byte arrays (no stream state) and one encoder, shared by everything
// that converts text and bytes.
export const utf8 = /* @__PURE__ */ new TextDecoder();
export const utf8Encoder = /* @__PURE__ */ new TextEncoder();
