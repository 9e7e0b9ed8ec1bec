-- web_search: search the web with Tavily. Needs an API key in config.lua:
--   tools = { web_search = { api_key = "tvly-..." } }
-- (base_url there points it at another Tavily-compatible endpoint).

local function setting(key, default)
  local v = clm.config[key]
  if type(v) == "string" and v ~= "" then return v end
  return default
end

clm.tool_register("web_search", {
  description = "Search the web and return an answer with the top results (title, URL, excerpt)",
  params_schema = {
    type = "object",
    properties = {
      query = { type = "string", description = "what to search for" },
      max_results = { type = "integer", description = "number of results, 1-20 (default 5)" },
      topic = { type = "string", enum = { "general", "news", "finance" },
        description = "search category (default general)" },
    },
    required = { "query" },
  },
  timeout_ms = 15000,
  no_prompt = true,
  invoke = function(args, ctx)
    local query = args.query
    if type(query) ~= "string" or query == "" then
      ctx:fail("missing 'query' argument")
      return
    end
    local api_key = setting("api_key")
    if not api_key then
      ctx:fail("web_search needs a Tavily API key: set tools = { web_search = { api_key = \"...\" } } in config.lua")
      return
    end
    local max_results = math.tointeger(tonumber(args.max_results)) or 5
    if max_results < 1 then max_results = 1 elseif max_results > 20 then max_results = 20 end
    local topic = type(args.topic) == "string" and args.topic or nil
    local body = json.encode({
      query = query,
      max_results = max_results,
      api_key = api_key,
      include_answer = "basic",
      topic = topic,
    })
    local url = string.gsub(setting("base_url", "https://api.tavily.com"), "/+$", "") .. "/search"
    local resp, err = http.post(url, body)
    if not resp then
      ctx:fail("search request failed: " .. err)
      return
    end
    local data = json.decode(resp.body)
    if resp.status ~= 200 then
      local detail = type(data) == "table" and (data.detail and (data.detail.error or data.detail) or data.error) or nil
      ctx:fail("search service returned HTTP " .. resp.status .. (type(detail) == "string" and (": " .. detail) or ""))
      return
    end
    if type(data) ~= "table" then
      ctx:fail("unreadable search response")
      return
    end
    local out = {}
    if type(data.answer) == "string" and data.answer ~= "" then
      out[#out + 1] = "Answer: " .. data.answer
      out[#out + 1] = ""
    end
    local results = type(data.results) == "table" and data.results or {}
    for i, r in ipairs(results) do
      if type(r) == "table" then
        out[#out + 1] = string.format("%d. %s", i, tostring(r.title or "(untitled)"))
        out[#out + 1] = "   " .. tostring(r.url or "")
        if type(r.content) == "string" and r.content ~= "" then out[#out + 1] = "   " .. r.content end
      end
    end
    if #results == 0 then out[#out + 1] = "no results." end
    ctx:complete(table.concat(out, "\n"))
  end,
})
