-- edit_file: replace an exact piece of text in a file. The match is literal (no patterns), must
-- be unique unless replace_all is set, and the file is rewritten in place.

local function count_plain(s, needle)
  local n, init = 0, 1
  while true do
    local i, j = string.find(s, needle, init, true)
    if not i then return n end
    n = n + 1
    init = j + 1
  end
end

local function replace_plain(s, needle, repl)
  local parts, init = {}, 1
  while true do
    local i, j = string.find(s, needle, init, true)
    if not i then break end
    parts[#parts + 1] = string.sub(s, init, i - 1)
    parts[#parts + 1] = repl
    init = j + 1
  end
  parts[#parts + 1] = string.sub(s, init)
  return table.concat(parts)
end

clm.tool_register("edit_file", {
  description = "Edit a file by replacing an exact string with another. old_str must match the file's"
    .. " text exactly (including whitespace) and be unique unless replace_all is true.",
  params_schema = {
    type = "object",
    properties = {
      path = { type = "string", description = "the file to edit" },
      old_str = { type = "string", description = "the exact text to replace" },
      new_str = { type = "string", description = "the replacement text" },
      replace_all = { type = "boolean", description = "replace every occurrence (default false)" },
    },
    required = { "path", "old_str", "new_str" },
  },
  invoke = function(args, ctx)
    local path, old, new = args.path, args.old_str, args.new_str
    if type(path) ~= "string" or path == "" then
      ctx:fail("missing 'path' argument")
      return
    end
    if type(old) ~= "string" or old == "" then
      ctx:fail("missing 'old_str' (use write_file to create new files)")
      return
    end
    if type(new) ~= "string" then
      ctx:fail("missing 'new_str' argument")
      return
    end
    local text, err = clm.read_file(path)
    if not text then
      ctx:fail("cannot read '" .. path .. "': " .. tostring(err))
      return
    end
    local n = count_plain(text, old)
    if n == 0 then
      ctx:fail("old_str not found in " .. path)
      return
    end
    if n > 1 and args.replace_all ~= true then
      ctx:fail(string.format("old_str matches %d times; must be unique (add surrounding lines to old_str,"
        .. " or set replace_all to replace every occurrence)", n))
      return
    end
    local ok, werr = clm.write_file(path, replace_plain(text, old, new))
    if not ok then
      ctx:fail("cannot write '" .. path .. "': " .. tostring(werr))
      return
    end
    ctx:complete(string.format("ok: replaced %d occurrence(s) of %d bytes with %d bytes each in %s",
      n, #old, #new, path))
  end,
})
