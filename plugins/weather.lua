-- get_weather: current conditions from wttr.in. The service URL can be changed with
-- tools = { weather = { base_url = "..." } } in config.lua.

local function urlencode(s)
  s = string.gsub(s, "[^%w%-%._~ ]", function(c) return string.format("%%%02X", string.byte(c)) end)
  return (string.gsub(s, " ", "+"))
end

local function base_url()
  local url = clm.config.base_url
  if type(url) ~= "string" or url == "" then url = "https://wttr.in" end
  return (string.gsub(url, "/+$", ""))
end

local function value_of(list)
  return type(list) == "table" and type(list[1]) == "table" and list[1].value or nil
end

clm.tool_register("get_weather", {
  description = "Get the current weather for a location",
  params_schema = {
    type = "object",
    properties = {
      location = { type = "string", description = "city or place name, e.g. 'Paris' or 'New York'" },
    },
    required = { "location" },
  },
  timeout_ms = 15000,
  invoke = function(args, ctx)
    local location = args.location
    if type(location) ~= "string" or location == "" then
      ctx:fail("missing 'location' argument")
      return
    end
    local url = base_url() .. "/" .. urlencode(location)
    -- Conditions and the resolved area name, fetched at the same time.
    local conditions = clm.spawn(function()
      local resp, err = http.get(url .. "?format=j1")
      if not resp then error("weather request failed: " .. err, 0) end
      if resp.status ~= 200 then error("weather service returned HTTP " .. resp.status, 0) end
      local data, jerr = json.decode(resp.body)
      if type(data) ~= "table" then error("unreadable weather data: " .. tostring(jerr), 0) end
      local cur = type(data.current_condition) == "table" and data.current_condition[1]
      if type(cur) ~= "table" then error("no current conditions for " .. location, 0) end
      return cur
    end)
    local area = clm.spawn(function()
      local resp = http.get(url .. "?format=%l")
      if resp and resp.status == 200 and #resp.body > 0 and #resp.body < 200 then
        return (string.gsub(resp.body, "%s+$", ""))
      end
      return location
    end)
    local results, err = clm.try_all({ conditions, area })
    if not results then
      ctx:fail(err)
      return
    end
    local cur, name = results[1], results[2]
    ctx:complete(string.format(
      "Weather for %s: %s, %s°F (%s°C), feels like %s°F; humidity %s%%; wind %s mph %s; precipitation %s in",
      name, value_of(cur.weatherDesc) or "unknown", cur.temp_F or "?", cur.temp_C or "?",
      cur.FeelsLikeF or "?", cur.humidity or "?", cur.windspeedMiles or "?", cur.winddir16Point or "",
      cur.precipInches or "0"))
  end,
})
