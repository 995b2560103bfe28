-- wrk script: absolute-URI proxy requests over 16 origins, a mix of allowed
-- and disallowed URLs (ALLOWED_ONLY=1 for allowed ones only).
local base = tonumber(os.getenv("ORIGIN_BASE") or "18000")
local n = tonumber(os.getenv("ORIGINS") or "16")
local allowedOnly = os.getenv("ALLOWED_ONLY") == "1"
local paths = { "/", "/page/1", "/a/b/c?x=1", "/private/open/doc", "/news/2026/11/22/story.html",
                "/private/secret", "/files/report.pdf", "/img/logo.png" }
local allowed = { "/", "/page/1", "/a/b/c?x=1", "/news/2026/11/22/story.html", "/img/logo.png" }
local reqs = {}
local list = allowedOnly and allowed or paths
-- DIRECT=1: origin-form requests to the first origin, which wrk connects
-- to itself (intercepted by robotsgate's transparent listener).
local direct = os.getenv("DIRECT") == "1"
if direct then n = 1 end
for i = 0, n - 1 do
  for _, p in ipairs(list) do
    local target = direct and p or "http://127.0.0.1:" .. (base + i) .. p
    reqs[#reqs + 1] = wrk.format("GET", target,
      { ["User-Agent"] = "loadbot/1.0", ["Host"] = "127.0.0.1:" .. (base + i) })
  end
end
local idx = 0
request = function()
  idx = idx + 1
  if idx > #reqs then idx = 1 end
  return reqs[idx]
end
