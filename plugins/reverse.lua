-- reverse_string: reverse a piece of text. Valid UTF-8 is reversed by character, so the result
-- stays valid text; anything else is reversed byte by byte.

local function reverse_utf8(s)
  local chars, n = {}, 0
  for _, c in utf8.codes(s) do
    n = n + 1
    chars[n] = utf8.char(c)
  end
  local out = {}
  for i = n, 1, -1 do out[#out + 1] = chars[i] end
  return table.concat(out)
end

clm.tool_register("reverse_string", {
  description = "Reverse a string",
  params_schema = {
    type = "object",
    properties = {
      text = { type = "string", description = "the text to reverse" },
    },
    required = { "text" },
  },
  invoke = function(args, ctx)
    local text = args.text
    if type(text) ~= "string" then
      ctx:fail("missing 'text' argument")
      return
    end
    if utf8.len(text) then
      ctx:complete(reverse_utf8(text))
    else
      ctx:complete(string.reverse(text))
    end
  end,
})
