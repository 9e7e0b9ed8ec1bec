-- tasks: a small to-do list the model keeps for itself during a session. It lives in this
-- plugin's state, so it lasts as long as the agent process.

local items = {}   -- in order: { id = n, text = "...", done = bool }
local next_id = 1

local function find(id)
  for i, t in ipairs(items) do
    if t.id == id then return t, i end
  end
end

local function render()
  if #items == 0 then return "no tasks." end
  local lines = {}
  for _, t in ipairs(items) do
    lines[#lines + 1] = string.format("[%s] %d. %s", t.done and "x" or " ", t.id, t.text)
  end
  return table.concat(lines, "\n")
end

local function want_id(args, action)
  local id = math.tointeger(tonumber(args.id))
  if not id then return nil, string.format("'%s' requires an 'id' argument", action) end
  if not find(id) then return nil, string.format("no task with id %d", id) end
  return id
end

local function want_text(args, action)
  if type(args.text) ~= "string" or args.text == "" then
    return nil, string.format("'%s' requires a 'text' argument", action)
  end
  return args.text
end

local actions = {
  add = function(args)
    local text, err = want_text(args, "add")
    if not text then return nil, err end
    local t = { id = next_id, text = text, done = false }
    next_id = next_id + 1
    items[#items + 1] = t
    return string.format("added task %d.\n%s", t.id, render())
  end,
  list = function()
    return render()
  end,
  done = function(args)
    local id, err = want_id(args, "done")
    if not id then return nil, err end
    find(id).done = true
    return string.format("task %d done.\n%s", id, render())
  end,
  remove = function(args)
    local id, err = want_id(args, "remove")
    if not id then return nil, err end
    local _, i = find(id)
    table.remove(items, i)
    return string.format("removed task %d.\n%s", id, render())
  end,
  update = function(args)
    local id, err = want_id(args, "update")
    if not id then return nil, err end
    local text, terr = want_text(args, "update")
    if not text then return nil, terr end
    find(id).text = text
    return string.format("updated task %d.\n%s", id, render())
  end,
}

clm.tool_register("tasks", {
  description = "Keep a to-do list for the current work: add, list, done, remove or update tasks",
  params_schema = {
    type = "object",
    properties = {
      action = { type = "string", enum = { "add", "list", "done", "remove", "update" },
        description = "what to do" },
      text = { type = "string", description = "task text (add, update)" },
      id = { type = "integer", description = "task id (done, remove, update)" },
    },
    required = { "action" },
  },
  no_prompt = true,
  invoke = function(args, ctx)
    local action = args.action
    local fn = actions[action]
    if not fn then
      ctx:fail(string.format("unknown action '%s'; use add, list, done, remove, or update", tostring(action)))
      return
    end
    local out, err = fn(args)
    if out then ctx:complete(out) else ctx:fail(err) end
  end,
})
